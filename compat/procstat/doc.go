// Package procstat reads a process's resident memory and CPU seconds from
// /proc (Linux only): Read for one process, SampleAll for named ones. The
// side-by-side measurements use it on the reference's and setpoint's
// processes: bench/cluster, bench/versus and compat/extendcost.
package procstat
