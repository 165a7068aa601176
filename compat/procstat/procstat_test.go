package procstat

import (
	"os"
	"testing"
)

func TestParseVmRSS(t *testing.T) {
	status := []byte("Name:\tkube-apiserver\nVmPeak:\t 1000 kB\nVmRSS:\t  412345 kB\nThreads:\t20\n")
	got, err := ParseVmRSS(status)
	if err != nil || got != 412345*1024 {
		t.Fatalf("ParseVmRSS = %d, %v; want %d", got, err, 412345*1024)
	}
	if _, err := ParseVmRSS([]byte("Name:\tzombie\n")); err == nil {
		t.Fatal("ParseVmRSS without VmRSS: no error")
	}
}

func TestParseCPUSeconds(t *testing.T) {
	// A command name with spaces and a ')' must not shift the fields.
	stat := []byte("4242 (kube (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 566 0 0 20 0 12 0 100 0 0\n")
	got, err := ParseCPUSeconds(stat)
	if err != nil || got != 18.0 {
		t.Fatalf("ParseCPUSeconds = %v, %v; want 18 (1234+566 ticks)", got, err)
	}
	if _, err := ParseCPUSeconds([]byte("1 (x) S 1 2")); err == nil {
		t.Fatal("short stat: no error")
	}
}

// TestSampleSelf reads this very process from /proc.
func TestSampleSelf(t *testing.T) {
	s, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s.RSSBytes < 1<<20 || s.CPUSeconds < 0 {
		t.Fatalf("sample of self = %+v: want RSS over 1 MiB", s)
	}
}
