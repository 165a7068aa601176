// Package proc owns the processes a side-by-side benchmark starts: Start
// runs a child with its output in a log file (killed with the benchmark,
// never outliving it), WaitLog and Alive follow it. Their resident memory
// and CPU seconds are read by compat/procstat.
//
// It is shared by the whole-cluster benchmark (bench/cluster) and the
// client-go benchmark against kube-apiserver (bench/versus).
package proc
