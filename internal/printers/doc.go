// Package printers renders the built-in kinds as the rows of a
// meta.k8s.io/v1 Table, with the columns `kubectl get` shows against a
// real Kubernetes server and the same cell values (pod STATUS derived from
// container states, deployment READY as ready/desired, service PORT(S) as
// 80:30080/TCP, human ages such as "5m2s").
//
// For(group, kind) returns a registry.TableConvertor, or nil for kinds
// without one. Invariants of every convertor:
//   - Columns with Priority 0 are the default view; Priority 1 columns are
//     for `kubectl get -o wide`. Cells always returns one cell per column,
//     wide ones included: the server sends them all and kubectl hides the
//     wide ones.
//   - The object-name column has Format "name".
//   - Integer columns hold int64 cells; all others hold strings.
//   - Ages are relative to the convertor's clock (ForClock injects it), so
//     the same object renders the same row at the same instant.
//
// Convertors keep no state besides the clock and are safe for concurrent
// use.
package printers
