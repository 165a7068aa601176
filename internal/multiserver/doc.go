// Package multiserver holds the tests of several API servers of one
// cluster on one etcd (it has no code of its own). They run real etcd
// members (etcdtest, a 3-member cluster) and real API servers in process
// (testserver with etcd storage and one shared PKI directory), and talk to
// them over HTTPS with setpoint's rest client and informers.
//
// What the tests establish:
//
//   - Replicas serve the same data, and a watch on one replica, from a
//     resourceVersion, delivers every write acknowledged by another, in
//     revision order, exactly once, with no gap (resourceVersions are
//     etcd revisions, common to all replicas).
//   - Read-your-writes across replicas: a consistent list (resourceVersion
//     "") or a get (resourceVersion unset) on replica B right after a write
//     acknowledged by replica A returns that write or a newer state. The
//     list waits until B's watch cache reached etcd's linearizable current
//     revision; the get reads etcd.
//   - One kubeconfig names every replica (same CA, same token); a rest
//     client built from it fails over when its replica dies: a write load
//     carries on through the other replica, losing no acknowledged write,
//     with failures bounded by the requests in flight at the crash, and an
//     informer resumes its watch through the other replica.
//   - Killing the etcd leader during a write load through both replicas
//     loses no acknowledged write, as seen by both replicas' caches.
package multiserver
