# The one command that runs every test: `make test`.
GO ?= go

.PHONY: test vet unit compat conformance-fast conformance e2e fuzz bench bench-cluster bench-versus build

build:
	$(GO) build -o setpoint ./cmd/setpoint

test: vet unit compat conformance-fast fuzz

vet:
	$(GO) vet ./...
	cd bench/reference && $(GO) vet .
	cd bench/clientgo && $(GO) vet .
	cd bench/cluster && $(GO) vet ./...
	cd bench/versus && $(GO) vet .
	cd conformance && $(GO) vet ./...
	cd compat && $(GO) vet ./...
	cd tests/sampleapiserver && $(GO) vet ./...
	cd conformance/e2e && $(GO) vet ./...

# Unit, integration and end-to-end tests (e2e drives the real binary with
# kubectl), then the conformance module (client-go, controller-runtime and
# kubectl against setpoint), all under the race detector.
unit:
	$(GO) test -race -count=1 -timeout 20m ./...
	cd conformance && $(GO) test -race -count=1 -timeout 20m ./...

# The compat module: the real kube-apiserver v1.37.2 (package refcluster)
# started beside setpoint, and the differential suite (package compat) that
# compares their answers; then Kubernetes' sample API server (module
# tests/sampleapiserver, on the reference etcd built here) aggregated
# through setpoint. The first run builds the reference from the Go
# module proxy into .bin/ (several minutes on 2 cores; cached afterwards,
# keyed by a hash of its sources: keep .bin/ between CI runs), as a step of
# its own so that no test timeout has to cover it.
compat:
	cd compat && $(GO) run ./cmd/refcluster -binaries
	cd compat && $(GO) test -race -count=1 -timeout 20m ./...
	cd tests/sampleapiserver && $(GO) test -race -count=1 -timeout 20m ./...

# Kubernetes' own conformance suite (e2e.test v1.37.2, built from the Go
# module proxy by tools/e2e into .bin/, keyed by a hash of its go.sum: keep
# .bin/ between CI runs) against a fresh `setpoint up --nodes 3`. The build
# is a step of its own (many minutes the first time) so that no run's time
# has to cover it. conformance-fast runs the CI subset (the specs of
# conformance/e2e/fast-v1.37.txt, which finish in seconds); conformance runs
# the whole list of conformance/e2e/specs-v1.37.txt, the API-level specs the
# real control plane passes on simulated nodes (not part of make test).
CONFORMANCE_FLAGS ?=
conformance-fast:
	cd conformance/e2e && $(GO) run . -build-only
	cd conformance/e2e && $(GO) test -race -count=1 ./...
	cd conformance/e2e && $(GO) run . -subset fast-v1.37.txt -parallel 2 -timeout 2m $(CONFORMANCE_FLAGS)

conformance:
	cd conformance/e2e && $(GO) run . -build-only
	cd conformance/e2e && $(GO) run . $(CONFORMANCE_FLAGS)

# Brief fuzzing of request-body decoding (every kind), selector parsing, kind
# sniffing, custom-resource schemas (prune, default, validate, CEL rules) and
# every built-in kind's strategy hooks. The budgets are counts of executions
# (about 10 s each on the 2-core machine), not durations: with -fuzztime as a
# duration, Go 1.26's fuzzing coordinator can fail a target with a bare
# "context deadline exceeded" when a busy worker is still running at the
# deadline (golang/go#75804, fixed in Go 1.27).
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeObject$$' -fuzztime 1000x ./internal/apiserver
	$(GO) test -run '^$$' -fuzz '^FuzzSelectors$$' -fuzztime 5000x ./internal/apiserver
	$(GO) test -run '^$$' -fuzz '^FuzzLeadingTypeMeta$$' -fuzztime 50000x ./internal/scheme
	$(GO) test -run '^$$' -fuzz '^FuzzPruneDefaultValidate$$' -fuzztime 5000x ./internal/crdschema
	$(GO) test -run '^$$' -fuzz '^FuzzStrategies$$' -fuzztime 10000x ./internal/registry/builtin

# Benchmarks of docs/BENCHMARKS.md.
bench:
	$(GO) test -run '^$$' -bench 'Create16Clients' -benchtime 10000x -count 3 ./bench/
	$(GO) test -run '^$$' -bench 'List10k' -benchtime 20x ./bench/
	$(GO) test -run '^$$' -bench 'WatchFanout' -benchtime 1x -count 3 ./bench/
	$(GO) test -run '^$$' -bench . -benchtime 3s ./internal/storage/boltdb/ ./internal/storage/memory/
	$(GO) test -run '^$$' -bench . -benchtime 2s ./internal/watchcache/
	$(GO) test -run '^$$' -bench DeploymentToRunning -benchtime 1x -count 3 -timeout 20m ./bench/
	cd bench/reference && $(GO) test -run '^$$' -bench Create16Clients -benchtime 20000x -count 3 .
	cd bench/reference && $(GO) test -run '^$$' -bench List10k -benchtime 30x -count 3 -benchmem .
	cd bench/clientgo && $(GO) test -run '^$$' -bench Workqueue -benchtime 1000000x -count 3 .
	cd bench/clientgo && $(GO) test -run '^$$' -bench Indexer -benchmem -count 3 .
	cd bench/clientgo && $(GO) test -run '^$$' -bench InformerSync -benchtime 1x -count 1 .

# The whole-cluster benchmark side by side with the real Kubernetes
# (bench/cluster): etcd + kube-apiserver + kube-controller-manager +
# kube-scheduler v1.37.2 with KWOK against `setpoint up`, the same client-go
# workloads (10,000-replica Deployment, 1,000-completion Job, 500-replica
# Parallel StatefulSet, DaemonSet on 500 nodes), alternating, with medians
# and ratios. Takes most of an hour at full size; a quick check of the
# harness: make bench-cluster BENCH_CLUSTER_FLAGS=-quick
BENCH_CLUSTER_FLAGS ?= -rounds 3 -reference-defaults
bench-cluster:
	cd bench/cluster && $(GO) run . $(BENCH_CLUSTER_FLAGS)

# The client-go benchmark side by side with etcd + kube-apiserver
# (bench/versus): creates, lists, informer sync and heap, watch fan-out,
# server memory and CPU, with ratios. Not part of `make test`; a full round
# takes several minutes per side. Check the harness:
# make bench-versus BENCH_VERSUS_FLAGS=-quick
BENCH_VERSUS_FLAGS ?= -rounds 3 -markdown
bench-versus:
	cd bench/versus && $(GO) run . $(BENCH_VERSUS_FLAGS)

