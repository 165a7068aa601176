package main

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// figure is one measured quantity, named the same on both sides.
type figure struct {
	Key          string // stable id, used in the JSON output
	Label        string // as printed in the table
	Unit         string
	HigherBetter bool
}

// run is every figure of one side in one round.
type run struct {
	Side       string             `json:"side"`
	Round      int                `json:"round"`
	Figures    map[string]float64 `json:"figures"`
	Phases     []phase            `json:"phases"`
	Notes      []string           `json:"notes,omitempty"`  // e.g. how the informer listed
	Errors     []string           `json:"errors,omitempty"` // workloads that failed
	LoadBefore string             `json:"loadAverageBefore"`
	LoadAfter  string             `json:"loadAverageAfter"`
}

// phase is the server's resource use over one workload: resident memory at
// its end and CPU seconds spent during it, per process and summed.
type phase struct {
	Workload   string                 `json:"workload"`
	RSSBytes   int64                  `json:"rssBytes"`
	CPUSeconds float64                `json:"cpuSeconds"`
	Processes  map[string]procFigures `json:"processes"`
}

type procFigures struct {
	RSSBytes   int64   `json:"rssBytes"`
	CPUSeconds float64 `json:"cpuSeconds"`
}

// set records a figure of the run, announcing it as progress.
func (r *run) set(f figure, v float64) {
	r.Figures[f.Key] = v
	logf("  %s: %s = %s %s", r.Side, f.Label, format(v), f.Unit)
}

func format(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// summary is one figure's medians over the rounds and their ratio.
type summary struct {
	Figure    figure  `json:"figure"`
	Reference float64 `json:"reference"` // median over rounds; NaN when missing
	Setpoint  float64 `json:"setpoint"`
	RefRange  [2]float64
	SPRange   [2]float64
	Ratio     float64 `json:"ratio"` // setpoint / reference, of the medians
	Runs      [2]int  // rounds that produced the figure, reference and setpoint
}

// summarize takes the median of each figure over the runs of each side.
func summarize(figs []figure, runs []run) []summary {
	var out []summary
	for _, f := range figs {
		s := summary{Figure: f}
		var ref, sp []float64
		for _, r := range runs {
			v, ok := r.Figures[f.Key]
			if !ok {
				continue
			}
			if r.Side == sideReference {
				ref = append(ref, v)
			} else {
				sp = append(sp, v)
			}
		}
		s.Reference, s.Setpoint = median(ref), median(sp)
		s.RefRange[0], s.RefRange[1] = spread(ref)
		s.SPRange[0], s.SPRange[1] = spread(sp)
		s.Runs = [2]int{len(ref), len(sp)}
		s.Ratio = s.Setpoint / s.Reference
		out = append(out, s)
	}
	return out
}

// verdict says which side is better and by how much: "setpoint 2.4×
// better", "setpoint 3.1× worse", or "even" within 5%.
func (s summary) verdict() string {
	if math.IsNaN(s.Ratio) || math.IsInf(s.Ratio, 0) || s.Ratio <= 0 {
		return "-"
	}
	adv := s.Ratio
	if !s.Figure.HigherBetter {
		adv = 1 / s.Ratio
	}
	switch {
	case adv >= 1.05:
		return fmt.Sprintf("setpoint %.2f× better", adv)
	case adv <= 1/1.05:
		return fmt.Sprintf("setpoint %.2f× worse", 1/adv)
	default:
		return "even"
	}
}

// cell is a median with its range over the rounds when there are several.
func cell(med float64, rng [2]float64, n int) string {
	if n == 0 {
		return "-"
	}
	if n == 1 || rng[0] == rng[1] {
		return format(med)
	}
	return fmt.Sprintf("%s (%s–%s)", format(med), format(rng[0]), format(rng[1]))
}

// printTable writes the summaries as a table.
func printTable(w io.Writer, sums []summary, rounds int) {
	fmt.Fprintf(w, "medians of %d round(s); ratio = setpoint / reference (reference: etcd + kube-apiserver)\n\n", rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tunit\treference\tsetpoint\tratio\tverdict")
	for _, s := range sums {
		ratio := "-"
		if !math.IsNaN(s.Ratio) && !math.IsInf(s.Ratio, 0) {
			ratio = fmt.Sprintf("%.2f", s.Ratio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Figure.Label, s.Figure.Unit,
			cell(s.Reference, s.RefRange, s.Runs[0]), cell(s.Setpoint, s.SPRange, s.Runs[1]), ratio, s.verdict())
	}
	tw.Flush()
}

// printMarkdown writes the summaries as the Markdown table of
// docs/BENCHMARKS.md.
func printMarkdown(w io.Writer, sums []summary) {
	fmt.Fprintln(w, "| figure | kube-apiserver + etcd | setpoint | setpoint / reference | verdict |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, s := range sums {
		ratio := "-"
		if !math.IsNaN(s.Ratio) && !math.IsInf(s.Ratio, 0) {
			ratio = fmt.Sprintf("%.2f", s.Ratio)
		}
		fmt.Fprintf(w, "| %s (%s) | %s | %s | %s | %s |\n", s.Figure.Label, s.Figure.Unit,
			cell(s.Reference, s.RefRange, s.Runs[0]), cell(s.Setpoint, s.SPRange, s.Runs[1]), ratio,
			s.verdict())
	}
}

// jsonSummary is a summary as written to the JSON output (no NaN).
type jsonSummary struct {
	Key       string   `json:"key"`
	Label     string   `json:"label"`
	Unit      string   `json:"unit"`
	Reference *float64 `json:"reference,omitempty"`
	Setpoint  *float64 `json:"setpoint,omitempty"`
	Ratio     *float64 `json:"ratio,omitempty"` // setpoint / reference
	Verdict   string   `json:"verdict"`
}

func jsonSummaries(sums []summary) []jsonSummary {
	num := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	out := make([]jsonSummary, 0, len(sums))
	for _, s := range sums {
		out = append(out, jsonSummary{Key: s.Figure.Key, Label: s.Figure.Label, Unit: s.Figure.Unit,
			Reference: num(s.Reference), Setpoint: num(s.Setpoint), Ratio: num(s.Ratio), Verdict: s.verdict()})
	}
	return out
}
