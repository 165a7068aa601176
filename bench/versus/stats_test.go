package main

import (
	"math"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		in := append([]float64(nil), c.in...)
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
		for i := range in {
			if in[i] != c.in[i] {
				t.Fatalf("median reordered its argument: %v", c.in)
			}
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median(nil) is not NaN")
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond}, {0.1, time.Millisecond}} {
		if got := percentile(d, c.p); got != c.want {
			t.Errorf("percentile(1..100ms, %v) = %v, want %v", c.p, got, c.want)
		}
	}
	if got := percentile(d[:3], 99); got != 3*time.Millisecond {
		t.Errorf("p99 of 3 values = %v, want the largest", got)
	}
	if percentile(nil, 50) != 0 {
		t.Error("percentile of none is not 0")
	}
}

func TestParseInts(t *testing.T) {
	got, err := parseInts(" 100, 500,2000 ")
	if err != nil || len(got) != 3 || got[0] != 100 || got[1] != 500 || got[2] != 2000 {
		t.Fatalf("parseInts = %v, %v", got, err)
	}
	for _, bad := range []string{"", "1,,2", "x", "0", "-5"} {
		if _, err := parseInts(bad); err == nil {
			t.Errorf("parseInts(%q): no error", bad)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 10000: "10,000", 100000: "100,000", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestSummarize takes medians per side, ratios of the medians, and says
// which side is better in the figure's own direction.
func TestSummarize(t *testing.T) {
	figs := []figure{
		{Key: "creates", Label: "creates", Unit: "/s", HigherBetter: true},
		{Key: "sync", Label: "sync", Unit: "ms"},
		{Key: "missing", Label: "missing", Unit: "ms"},
	}
	runs := []run{
		{Side: sideReference, Figures: map[string]float64{"creates": 2000, "sync": 100}},
		{Side: sideSetpoint, Figures: map[string]float64{"creates": 7000, "sync": 700}},
		{Side: sideReference, Figures: map[string]float64{"creates": 3000, "sync": 120}},
		{Side: sideSetpoint, Figures: map[string]float64{"creates": 9000, "sync": 600}},
		{Side: sideReference, Figures: map[string]float64{"creates": 2500, "sync": 80}},
		{Side: sideSetpoint, Figures: map[string]float64{"creates": 8000}},
	}
	sums := summarize(figs, runs)
	c, s, m := sums[0], sums[1], sums[2]
	if c.Reference != 2500 || c.Setpoint != 8000 || c.Ratio != 3.2 || c.Runs != [2]int{3, 3} {
		t.Errorf("creates summary = %+v", c)
	}
	if c.RefRange != [2]float64{2000, 3000} || c.SPRange != [2]float64{7000, 9000} {
		t.Errorf("creates ranges = %v %v", c.RefRange, c.SPRange)
	}
	if got := c.verdict(); got != "setpoint 3.20× better" {
		t.Errorf("creates verdict = %q", got)
	}
	if s.Reference != 100 || s.Setpoint != 650 || s.Runs != [2]int{3, 2} {
		t.Errorf("sync summary = %+v", s)
	}
	if got := s.verdict(); got != "setpoint 6.50× worse" {
		t.Errorf("sync verdict = %q", got)
	}
	if got := m.verdict(); got != "-" || m.Runs != [2]int{0, 0} {
		t.Errorf("missing figure: verdict %q, runs %v", got, m.Runs)
	}
	even := summary{Figure: figs[1], Ratio: 1.03}
	if got := even.verdict(); got != "even" {
		t.Errorf("3%% apart: verdict %q, want even", got)
	}
}
