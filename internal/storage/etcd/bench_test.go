package etcd_test

import (
	"fmt"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/storage/etcd/etcdtest"
	"github.com/setpoint-dev/setpoint/internal/storage/storagetest"
)

// The same benchmark bodies as the memory and bolt stores, on one local
// etcd member (fsync on), so that the numbers compare side by side.

func BenchmarkCreate1KiB(b *testing.B) {
	c := etcdtest.Start(b)
	for _, clients := range []int{16, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			storagetest.BenchmarkCreate(b, open(b, c.Endpoints()), clients, 1024)
		})
	}
}

func BenchmarkList10000(b *testing.B) {
	c := etcdtest.Start(b)
	storagetest.BenchmarkList(b, open(b, c.Endpoints()), 10000, 1024)
}
