// Package history keeps a controller's ControllerRevisions: the immutable
// snapshots (apps/v1 ControllerRevision) of the part of its spec that
// StatefulSets and DaemonSets roll out, which `kubectl rollout history` and
// `kubectl rollout undo` read. It follows Kubernetes' pkg/controller/history
// in every fact a client sees: names, labels, hashes, ordering.
//
// # Names and hashes
//
// A revision of owner O with data D (D.Raw, the JSON patch the owner's
// controller stores) is named Name(O.name, Hash(D, collisionCount)) =
// "<owner>-<hash>" (the owner's name cut to 223 bytes), and carries the
// label HashLabel ("controller.kubernetes.io/hash") with the hash, the
// labels of the owner's pod template, and a controller ownerReference to O.
// Hash is Kubernetes' HashControllerRevision: 32-bit FNV-1 (not 1a) over
// D.Raw, then, when collisionCount is not nil, the count in decimal ASCII;
// the sum printed in decimal and passed through rand.SafeEncodeString. Only
// Data.Raw is hashed and compared: both of Kubernetes' users store Raw.
//
// # Calling protocol
//
//	h, err := history.New(crInformer.Indexer(), crClient)   // once
//	revs, err := h.List(owner, selector)                    // per sync
//	history.Sort(revs)
//	rev := history.NewRevision(owner, gvk, templateLabels, patch, history.Next(revs), &collisions)
//	if eq := history.FindEqual(revs, rev); ... { h.SetRevision(ctx, eq[len(eq)-1], rev.Revision) }
//	else { created, err := h.Create(ctx, owner, rev, &collisions) }
//	err = h.Truncate(ctx, revs, live, limit)
//
// New installs controllerref.ControllerUIDIndex on the indexer, so List
// finds the owner's revisions and its namespace's orphans without scanning.
//
// # Invariants
//
//   - List returns revisions matching the selector that the owner controls
//     or that have no controller; never another controller's.
//   - Create retries on AlreadyExists: if the existing revision has the same
//     Data.Raw it is returned (a lagging cache, a restart); otherwise
//     *collisionCount is incremented and the next name tried. The caller
//     persists the count in its status (status.collisionCount).
//   - Revisions from the cache are never modified; writes go to copies.
//   - Truncate never deletes a live revision (the caller names them: current,
//     update, and every pod's), and deletes the oldest others first until at
//     most limit remain.
package history
