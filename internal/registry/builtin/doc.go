// Package builtin assembles the built-in resources: the kinds of every API
// group package (core, apps, coordination, apiextensions, …), group by group
// in the order kube-apiserver lists the groups in discovery.
//
// Its tests cover what holds across kinds: discovery names and
// subresources, Go types and tables, hooks rejecting objects of another
// type, and fuzzed decoding of every kind through every hook.
package builtin
