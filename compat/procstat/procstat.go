package procstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// Sample is one process's resident memory and CPU time at a moment.
type Sample struct {
	RSSBytes   int64
	CPUSeconds float64
}

// Read reads /proc/<pid>/status (VmRSS) and /proc/<pid>/stat (utime,
// stime).
func Read(pid int) (Sample, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Sample{}, fmt.Errorf("procstat: %w", err)
	}
	rss, err := ParseVmRSS(status)
	if err != nil {
		return Sample{}, fmt.Errorf("procstat: pid %d: %w", pid, err)
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Sample{}, fmt.Errorf("procstat: %w", err)
	}
	cpu, err := ParseCPUSeconds(stat)
	if err != nil {
		return Sample{}, fmt.Errorf("procstat: pid %d: %w", pid, err)
	}
	return Sample{RSSBytes: rss, CPUSeconds: cpu}, nil
}

// ParseVmRSS returns the VmRSS line of /proc/<pid>/status in bytes.
func ParseVmRSS(status []byte) (int64, error) {
	for _, line := range bytes.Split(status, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		fields := strings.Fields(string(rest))
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("unexpected VmRSS line %q", line)
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("VmRSS: %w", err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("no VmRSS in status")
}

// ParseCPUSeconds returns utime + stime of /proc/<pid>/stat in seconds. The
// command name (field 2) is in parentheses and may hold spaces, so fields
// are counted from the last ')'.
func ParseCPUSeconds(stat []byte) (float64, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat %q", stat)
	}
	// After ')': state (field 3), ppid … utime is field 14, stime 15.
	fields := strings.Fields(string(stat[i+1:]))
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, fmt.Errorf("short stat %q", stat)
	}
	u, err := strconv.ParseUint(fields[utime], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("utime: %w", err)
	}
	s, err := strconv.ParseUint(fields[stime], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stime: %w", err)
	}
	return float64(u+s) / clockTicks, nil
}

// Named is a process by component name.
type Named struct {
	Name string
	PID  int
}

// Usage is a set of processes sampled at one moment.
type Usage map[string]Sample

// SampleAll reads every process of procs, keyed by name.
func SampleAll(procs []Named) (Usage, error) {
	u := Usage{}
	for _, p := range procs {
		s, err := Read(p.PID)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name, err)
		}
		u[p.Name] = s
	}
	return u, nil
}

// Total sums the resident memory and CPU time of every process.
func (u Usage) Total() Sample {
	var t Sample
	for _, s := range u {
		t.RSSBytes += s.RSSBytes
		t.CPUSeconds += s.CPUSeconds
	}
	return t
}
