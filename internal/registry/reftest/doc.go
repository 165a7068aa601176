// Package reftest replays requests against setpoint's API server (a real
// server from internal/testserver) and compares every answer with the one
// kube-apiserver v1.37.2 gave to the same request. Tests only; it is the
// one helper the kind packages use to compare themselves with the
// reference.
//
// # Cases
//
// A kind package keeps its cases in testdata/reference.json (a File): the
// namespaces the cases use, the cluster-scoped objects they create, and the
// cases in the order they run, all against one server, each seeing what
// the earlier ones wrote. A Case is a request (method, path, JSON body,
// content type, Accept header) with, optionally, setup requests sent
// before it (they must succeed; their answers are not compared), an edit
// (a PUT whose body is the object read from the path with a JSON merge
// patch applied: a read-modify-write update), a Table read of the object
// it wrote, and Want, the reference's answer. Tests that must build cases
// in Go (a server with its own authorizer, keys made at run time) pass
// the same Case values to Server.Replay.
//
// # What is compared
//
//   - the status code;
//   - the Warning headers, in order;
//   - the whole body after normalization: for a refusal the Status (code,
//     reason, message, details name/group/kind, causes in order with their
//     messages), for a success the object or list as written or read;
//   - for a case with Table set, the object as a meta.k8s.io Table;
//   - after a refused write, the collection it addressed: its list
//     resourceVersion (the store's revision) and the name and
//     resourceVersion of every item must be as they were before.
//
// Normalization drops what differs between any two servers answering the
// same request: uids, creation and deletion timestamps, resourceVersions,
// the times of managedFields entries (in objects, list items and Table
// rows), and the descriptions of Table columns; the answer's own uid
// is written "UID" wherever it is repeated (a Job's selector and labels),
// and in a Status's messages any uid is written "UID" and the time of a
// managedFields entry "<time>". A case's Ignore lists further dotted paths ("status",
// "rows.cells.4" for an age column; an index picks one element of an
// array, a name applies to every element; "*" leaves the body out, so that
// only the code and the warnings are compared), and its Note says why.
//
// # Recording
//
// With SETPOINT_REFERENCE_KUBECONFIG naming the kubeconfig of a running
// kube-apiserver v1.37.2 (token or client certificate auth), Run sends the
// cases there instead and rewrites the file with its answers: it deletes
// the File's Cleanup paths and namespaces first (waiting until they are
// gone), creates the namespaces, runs every case in order, then deletes
// them again. For example
//
//	SETPOINT_REFERENCE_KUBECONFIG=/work/refdump/kubeconfig \
//	    go test ./internal/registry/node -run TestReference -count=1
//
// A new case is added to the file without a want and recorded the same
// way; the replay refuses cases without one.
package reftest
