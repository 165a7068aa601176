package main

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

// procSample is one process's resident memory and CPU time at a moment.
type procSample struct {
	RSSBytes   int64
	CPUSeconds float64
}

// sampleProc reads /proc/<pid>/status (VmRSS) and /proc/<pid>/stat (utime,
// stime).
func sampleProc(pid int) (procSample, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procSample{}, fmt.Errorf("procstat: %w", err)
	}
	rss, err := parseVmRSS(status)
	if err != nil {
		return procSample{}, fmt.Errorf("procstat: pid %d: %w", pid, err)
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procSample{}, fmt.Errorf("procstat: %w", err)
	}
	cpu, err := parseCPUSeconds(stat)
	if err != nil {
		return procSample{}, fmt.Errorf("procstat: pid %d: %w", pid, err)
	}
	return procSample{RSSBytes: rss, CPUSeconds: cpu}, nil
}

// parseVmRSS returns the VmRSS line of /proc/<pid>/status in bytes.
func parseVmRSS(status []byte) (int64, error) {
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

// parseCPUSeconds returns utime + stime of /proc/<pid>/stat in seconds. The
// command name (field 2) is in parentheses and may hold spaces, so fields
// are counted from the last ')'.
func parseCPUSeconds(stat []byte) (float64, error) {
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

// namedPID is a process of a side, by component name.
type namedPID struct {
	Name string
	PID  int
}

// usage is a side's processes sampled at one moment.
type usage map[string]procSample

func sampleAll(procs []namedPID) (usage, error) {
	u := usage{}
	for _, p := range procs {
		s, err := sampleProc(p.PID)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name, err)
		}
		u[p.Name] = s
	}
	return u, nil
}

// total sums the resident memory and CPU time of every process.
func (u usage) total() procSample {
	var t procSample
	for _, s := range u {
		t.RSSBytes += s.RSSBytes
		t.CPUSeconds += s.CPUSeconds
	}
	return t
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
