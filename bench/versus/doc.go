// Command versus runs the same client-go workload against setpoint's API
// server and against the real Kubernetes API server in one run, alternating
// between them, and reports each figure of both and their ratio.
//
// The reference is etcd 3.6 and kube-apiserver v1.37.2 alone (package
// compat/refcluster: built from the Go module proxy into .bin/, or taken
// from $SETPOINT_REFERENCE_BIN_DIR); setpoint is `setpoint apiserver` built
// from this repository (or -setpoint-bin), on its default durable storage.
// Both are reached over HTTPS by client-go v0.37 with its defaults — HTTP/2,
// protobuf for the built-in types, informers listing by the streaming list
// (the WatchListClient feature, on by default) — except client-side
// throttling, which is off so that the driver never waits on itself.
//
// Each round starts a fresh server of every side in turn (the side that
// goes first alternates between rounds) and runs the workloads on it, in
// this order:
//
//   - creates: -objects (10,000) ConfigMaps of 1 KiB, a label "group" of
//     ten values, by each of -writers (16 and 64) concurrent writers on one
//     client, into a namespace per writer count: creates per second, and
//     the CPU microseconds per create of the driver (this process) and of
//     the server;
//   - lists: the ConfigMaps of the first create run, unpaged, in pages of
//     500 and by a label selector that matches 1 in 10: the median time of
//     -reps calls after a warm-up;
//   - informer: a shared informer from a new client on those ConfigMaps,
//     from start to HasSynced, and the client's live heap after a GC with
//     the informer's store full (less the heap before): medians of -reps;
//   - watch: for each of -watchers (100, 500, 2,000), that many watches
//     (field selector metadata.name) on one ConfigMap, spread over
//     -watch-clients clients, while one writer gets and updates it for
//     -watch-duration (10 s) stamping the send time: the delivery latency
//     p50, p99 and max over every watcher and event, the writer's get+put
//     rate, and the CPU microseconds per delivered event of the driver (the
//     writer and every watcher's decoding) and of the server, from the
//     first write until the last delivery;
//   - informer-large: -large-objects (100,000) ConfigMaps loaded by 64
//     writers (creates per second recorded), then one informer sync of them
//     with its heap.
//
// The driver and the server share the machine's cores, so a rate is bound
// by the two's CPU per operation together; the per-operation figures say
// how much of that is the driver's. Around each workload it reads, from /proc, the server's resident memory
// at the end and its CPU seconds during the workload (for the reference
// etcd and kube-apiserver summed; each is in the JSON output). The process
// prints progress as it goes and ends with a table of the medians over the
// rounds (with their range), the ratio setpoint / reference of the medians
// and which side is better by how much. -json writes every run's figures,
// phases and notes (how each informer listed: streaming list or list), and
// the summary; -markdown also prints the table in docs/BENCHMARKS.md's
// layout.
//
//	make bench-versus
//	make bench-versus BENCH_VERSUS_FLAGS='-rounds 3 -json versus.json'
//	cd bench/versus && go run . -quick
//
// The 100,000-object load keeps about a gigabyte in the server and a few
// hundred megabytes in the driver. The module is not a dependency of
// setpoint: client-go and the reference live only here.
package main
