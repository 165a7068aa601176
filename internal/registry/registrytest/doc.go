// Package registrytest is for the unit tests of the kind packages: it runs
// a kind's strategy hooks in the order the server runs them (Create,
// Update, UpdateStatus), without a server, and compares the field errors
// in a compact "path:Type" form and the selectable fields of an object.
// Tests only.
//
// It does not talk to a server and knows nothing of kube-apiserver's
// answers: tests that send requests to a real server and compare the
// answers with the reference's use package reftest.
package registrytest
