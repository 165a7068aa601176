// Package difftest is the machinery of the differential suite (package
// compat): two Sides (the reference kube-apiserver and setpoint) reached
// with raw HTTP, the normalization of what legitimately differs between two
// servers (uids, timestamps, resourceVersions, generated names, allocated
// addresses), a structural JSON diff that yields one Difference per
// differing leaf, and the allowlist that records each known difference with
// its reason.
//
// What is compared is always what a client receives: status code, media
// type, Warning headers and the decoded body. A Difference is identified by
// its category (discovery, openapi, tables, cases, protocol, served), its
// case (a slash-separated identifier starting with the resource it concerns,
// "apps/v1/deployments/create/missing-selector") and the path of the
// differing value inside the answer ("body.details.causes[0].field").
//
// Calling protocol: build a Report per test with NewReport(t, allowlist,
// category); Compare(case, ref, sp) records the differences of two
// answers; Finish (deferred) reports each difference that no allowlist
// entry covers as one test error line, and each allowlisted one as a log
// line. Allowlist.Unused, after the suite, names entries that matched
// nothing, so stale entries are removed as setpoint improves.
package difftest
