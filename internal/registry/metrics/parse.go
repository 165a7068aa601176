package metrics

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// sample is one line of the Prometheus text format: a metric name, its
// labels, its value and its timestamp (zero when the line has none).
type sample struct {
	name   string
	labels map[string]string
	value  float64
	ts     time.Time
}

// parseText reads the samples of the families in want from a Prometheus
// text exposition (version 0.0.4), skipping comments and other families.
func parseText(r io.Reader, want map[string]bool) ([]sample, error) {
	var out []sample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name := line
		if i := strings.IndexAny(line, "{ \t"); i >= 0 {
			name = line[:i]
		}
		if !want[name] {
			continue
		}
		s, err := parseLine(line, name)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// parseLine parses `name{k="v",…} value [timestamp_ms]`.
func parseLine(line, name string) (sample, error) {
	s := sample{name: name, labels: map[string]string{}}
	rest := line[len(name):]
	if strings.HasPrefix(rest, "{") {
		var err error
		if rest, err = parseLabels(rest[1:], s.labels); err != nil {
			return s, err
		}
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 || len(fields) > 2 {
		return s, fmt.Errorf("malformed sample %q", line)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, fmt.Errorf("value of %q: %w", line, err)
	}
	s.value = v
	if len(fields) == 2 {
		ms, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return s, fmt.Errorf("timestamp of %q: %w", line, err)
		}
		s.ts = time.UnixMilli(ms)
	}
	return s, nil
}

// parseLabels reads `k="v",…}` into into and returns what follows the
// closing brace.
func parseLabels(s string, into map[string]string) (string, error) {
	for {
		s = strings.TrimLeft(s, " ,")
		if strings.HasPrefix(s, "}") {
			return s[1:], nil
		}
		eq := strings.IndexByte(s, '=')
		if eq <= 0 || len(s) < eq+2 || s[eq+1] != '"' {
			return "", fmt.Errorf("malformed labels near %q", s)
		}
		key := strings.TrimSpace(s[:eq])
		var b strings.Builder
		i := eq + 2
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					b.WriteByte('\n')
				default:
					b.WriteByte(s[i])
				}
				continue
			}
			b.WriteByte(s[i])
		}
		if i >= len(s) {
			return "", fmt.Errorf("unterminated label value of %s", key)
		}
		into[key] = b.String()
		s = s[i+1:]
	}
}
