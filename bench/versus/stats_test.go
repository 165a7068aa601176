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
