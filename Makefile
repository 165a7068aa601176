# The one command that runs every test: `make test`.
GO ?= go
FUZZTIME ?= 10s

.PHONY: test vet unit e2e fuzz bench build

build:
	$(GO) build -o setpoint ./cmd/setpoint

test: vet unit fuzz

vet:
	$(GO) vet ./...

# Unit, integration and end-to-end tests (e2e drives the real binary with
# kubectl), all under the race detector.
unit:
	$(GO) test -race -count=1 -timeout 20m ./...

# Brief fuzzing of request-body decoding and selector parsing.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeObject$$' -fuzztime $(FUZZTIME) ./internal/apiserver
	$(GO) test -run '^$$' -fuzz '^FuzzSelectors$$' -fuzztime $(FUZZTIME) ./internal/apiserver

# Benchmarks of docs/BENCHMARKS.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 30m ./bench/ ./internal/storage/... ./internal/watchcache/
