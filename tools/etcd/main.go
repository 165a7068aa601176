// Command etcd is the upstream etcd server, built from etcd's own Go module
// (go.etcd.io/etcd/server/v3) for machines that have no etcd binary: tests
// and CI of setpoint's etcd storage (internal/storage/etcd/etcdtest) build it
// once and cache it. It lives in its own module so that setpoint itself never
// depends on the etcd server, only on its v3 client.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
