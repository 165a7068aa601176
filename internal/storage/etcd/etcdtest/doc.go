// Package etcdtest runs real etcd servers for tests: a single member or an
// N-member cluster of the upstream etcd binary, on free loopback ports,
// with its data under t.TempDir().
//
// The binary is $SETPOINT_ETCD if set, else the first etcd on PATH, else
// one built from the tools/etcd module of this repository (etcd's own
// server module, no download beyond the Go module cache) into .bin/ at the
// repository root, named after a hash of that module's go.mod and main.go
// so that a version change rebuilds it. The build happens at most once per
// process and is shared across processes through the cache (a concurrent
// build in another process is harmless: the binary is renamed into place).
//
// Members keep etcd's fsync (durability claims in tests mean something);
// they use short heartbeat and election timeouts so that a 3-member cluster
// elects a new leader within about a second after a kill. Every member is
// stopped when the test ends. Kill and Restart act on one member: Restart
// reuses its data directory and ports, so it rejoins as the same member.
package etcdtest
