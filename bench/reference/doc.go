// Package reference runs setpoint's durable store side by side with etcd,
// the store Kubernetes runs on, in one benchmark run: same machine, same
// process, same operations (create-if-absent of 1 KiB values from 16
// clients, and listing 10,000 keys), each on its own fresh directory.
//
// It is a separate module so that the etcd server never becomes a
// dependency of setpoint itself.
package reference
