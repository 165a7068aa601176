package main

import (
	"strings"
	"testing"
)

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

func TestPrintSummaryComparesEachSideWithTheReference(t *testing.T) {
	results := []result{
		{Workload: "deployment", Side: "reference (qps 1000)", Finished: true, Seconds: 90, RSSBytes: 2000e6, CPUSeconds: 180},
		{Workload: "deployment", Side: "setpoint", Finished: true, Seconds: 30, RSSBytes: 2000e6, CPUSeconds: 60},
		{Workload: "deployment", Side: "setpoint-kwok-nodes", Finished: true, Seconds: 18, RSSBytes: 1000e6, CPUSeconds: 36},
	}
	sides := []side{{name: "setpoint"}, {name: "reference (qps 1000)", reference: true}, {name: "setpoint-kwok-nodes"}}
	var b strings.Builder
	printSummary(&b, []workload{{name: "deployment", what: "Deployment"}}, sides, results)
	for _, want := range []string{
		"Ratios are to reference (qps 1000).",
		"| Deployment | reference (qps 1000) | 90.0 s | 1 of 1 | 2000 MB | 180.0 |  |  |  |",
		"| Deployment | setpoint | 30.0 s | 1 of 1 | 2000 MB | 60.0 | 3.00× | 1.00 | 0.33 |",
		"| Deployment | setpoint-kwok-nodes | 18.0 s | 1 of 1 | 1000 MB | 36.0 | 5.00× | 0.50 | 0.20 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

func TestPrintSummaryWithoutReferenceComparesWithTheFirstSide(t *testing.T) {
	results := []result{
		{Workload: "deployment", Side: "setpoint", Finished: true, Seconds: 30, RSSBytes: 2000e6, CPUSeconds: 60},
		{Workload: "deployment", Side: "setpoint-alwaysallow", Finished: true, Seconds: 29, RSSBytes: 2000e6, CPUSeconds: 57},
	}
	var b strings.Builder
	printSummary(&b, []workload{{name: "deployment", what: "Deployment"}}, []side{{name: "setpoint"}, {name: "setpoint-alwaysallow"}}, results)
	for _, want := range []string{"Ratios are to setpoint.", "| Deployment | setpoint-alwaysallow | 29.0 s | 1 of 1 | 2000 MB | 57.0 | 1.03× | 1.00 | 0.95 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}
