package main

import "testing"

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
