package main

import (
	"os"
	"testing"
)

func TestParseVmRSS(t *testing.T) {
	status := []byte("Name:\tkube-apiserver\nVmPeak:\t 1000 kB\nVmRSS:\t  412345 kB\nThreads:\t20\n")
	got, err := parseVmRSS(status)
	if err != nil || got != 412345*1024 {
		t.Fatalf("parseVmRSS = %d, %v; want %d", got, err, 412345*1024)
	}
	if _, err := parseVmRSS([]byte("Name:\tzombie\n")); err == nil {
		t.Fatal("parseVmRSS without VmRSS: no error")
	}
}

func TestParseCPUSeconds(t *testing.T) {
	// A command name with spaces and a ')' must not shift the fields.
	stat := []byte("4242 (kube (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 566 0 0 20 0 12 0 100 0 0\n")
	got, err := parseCPUSeconds(stat)
	if err != nil || got != 18.0 {
		t.Fatalf("parseCPUSeconds = %v, %v; want 18 (1234+566 ticks)", got, err)
	}
	if _, err := parseCPUSeconds([]byte("1 (x) S 1 2")); err == nil {
		t.Fatal("short stat: no error")
	}
}

// TestSampleSelf reads this very process from /proc.
func TestSampleSelf(t *testing.T) {
	s, err := sampleProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s.RSSBytes < 1<<20 || s.CPUSeconds < 0 {
		t.Fatalf("sample of self = %+v: want RSS over 1 MiB", s)
	}
}

func TestSummarize(t *testing.T) {
	results := []result{
		{Workload: "deployment", Side: "setpoint", Finished: true, Seconds: 15, RSSBytes: 200e6, CPUSeconds: 30},
		{Workload: "deployment", Side: "setpoint", Finished: true, Seconds: 17, RSSBytes: 180e6, CPUSeconds: 34},
		{Workload: "deployment", Side: "setpoint", Finished: false, RSSBytes: 190e6, CPUSeconds: 40},
		{Workload: "deployment", Side: "reference", Finished: true, Seconds: 63, RSSBytes: 900e6, CPUSeconds: 150},
		{Workload: "job", Side: "setpoint", Finished: true, Seconds: 1},
	}
	s := summarize(results, "deployment", "setpoint")
	if s.runs != 3 || s.finished != 2 || s.seconds != 16 || s.rss != 190e6 || s.cpu != 34 {
		t.Fatalf("summarize = %+v", s)
	}
}
