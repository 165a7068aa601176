// Package apfflood is the flooding tenant of the API Priority and Fairness
// benchmarks: setpoint's (internal/apiserver's BenchmarkPriorityAndFairnessFlood)
// and the same scenario against kube-apiserver (compat/cmd/apfflood), so
// that both servers are flooded by the same client.
//
// The flood runs in a process of its own at the lowest CPU priority
// (nice 19), as a tenant elsewhere would: the benchmarks measure how a
// server shares itself among clients, and a flooding client competing with
// the server and the measured clients for a small machine's cores would
// measure the operating system's scheduler instead. The flood's requests
// still cost the server what they cost.
//
// The protocol between the two processes: the parent starts its own
// executable (Start) with the JSON of an Order in an environment variable it
// names; the child (Child, called from the executable's main or TestMain
// when that variable is set) runs Order.Workers loops of GETs of
// Order.Path, each honouring Retry-After on a 429 as client-go does,
// prints "rejected" at its first 429, and, when its standard input
// closes, stops and prints its Counts as JSON.
package apfflood
