// Package scheme holds the runtime.Scheme of the built-in kinds and the
// codecs the server uses: JSON and YAML on the wire, protobuf in storage.
//
// The scheme is built once per process by New and never mutated afterwards,
// so it is safe for concurrent use. It is not a package-level global: the
// server builds it and passes it down.
package scheme
