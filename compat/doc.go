// Package compat is the differential suite: its tests start the real
// kube-apiserver v1.37.2 (package refcluster) and setpoint (package testenv)
// once per test binary run, send both the same raw HTTP requests, and
// compare what a client receives.
//
// Categories (one test each, differences reported one per line):
//
//   - served: every resource and subresource of the reference is served.
//   - discovery: /api, /apis, every group-version document, aggregated
//     discovery (v2).
//   - openapi: /openapi/v3 per group-version and /openapi/v2: paths,
//     operations, parameters and per-kind schemas (structure, not prose);
//     kubectl explain; the enum data of internal/openapi is current.
//   - tables: Table columns of every listable resource, and the cells of
//     one sample object created on both.
//   - cases: per resource, a table of valid and invalid writes
//     (testdata/cases/*.yaml plus the generic cases of
//     testdata/cases/_generic.yaml), comparing code, reason, message,
//     details and causes, or the created object.
//   - protocol: boolean query parameters, watch from a too-old
//     resourceVersion, dry-run, deletion answers, 404/405/406/415, Table
//     and PartialObjectMetadata views, paged lists continued at an old
//     revision (remainingItemCount).
//
// Every difference is either fixed in setpoint or listed in
// testdata/allowlist.yaml with what differs, why, and who can remove it;
// docs/COMPATIBILITY.md renders that list (TestAllowlistDocumented keeps
// it current). Resources setpoint does not serve yet are one allowlist
// line each; their cases start running as soon as they are served.
//
// Run: cd compat && go test -race -count=1 . (COMPAT_REPORT=file writes
// every difference, allowlisted or not, to file).
package compat
