// Package bench holds the API server's end-to-end benchmarks: real HTTPS
// clients against a real server on a real store, in one process. Each
// benchmark reports its figure with b.ReportMetric; docs/BENCHMARKS.md
// quotes them with the command that reproduces them.
package bench
