package reference

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/storage/boltdb"
)

const clients = 16

var value = []byte(strings.Repeat("x", 1024))

// creator creates key with value if it is absent, as the API server's
// create does.
type creator func(ctx context.Context, key string) error

// startEtcd runs a single-member etcd (defaults: fsync on every commit)
// in dir and returns a client.
func startEtcd(b *testing.B) *clientv3.Client {
	cfg := embed.NewConfig()
	cfg.Dir = b.TempDir()
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop()) // its shutdown errors would garble the benchmark output
	lc, _ := url.Parse("http://127.0.0.1:0")
	lp, _ := url.Parse("http://127.0.0.1:0")
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*lc}, []url.URL{*lc}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*lp}, []url.URL{*lp}
	cfg.InitialCluster = cfg.Name + "=" + lp.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		b.Fatal("etcd not ready")
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.Clients[0].Addr().String()}, DialTimeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func etcdCreate(c *clientv3.Client) creator {
	return func(ctx context.Context, key string) error {
		resp, err := c.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, string(value))).Commit()
		if err == nil && !resp.Succeeded {
			err = fmt.Errorf("%s exists", key)
		}
		return err
	}
}

func openBolt(b *testing.B) storage.Store {
	s, err := boltdb.Open(b.TempDir()+"/setpoint.db", boltdb.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func boltCreate(s storage.Store) creator {
	return func(ctx context.Context, key string) error {
		_, err := s.Create(ctx, key, value)
		return err
	}
}

// runCreates does b.N creates from 16 goroutines and reports creates/s.
func runCreates(b *testing.B, create creator) {
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				if err := create(context.Background(), fmt.Sprintf("/registry/core/configmaps/default/cm-%08d", i)); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "creates/s")
}

// BenchmarkCreate16Clients: create-if-absent of 1 KiB values, 16 clients,
// fsync'd: etcd (Txn over gRPC on loopback) and setpoint's bolt store
// (through its Go contract, as the API server calls it).
func BenchmarkCreate16Clients(b *testing.B) {
	b.Run("etcd", func(b *testing.B) { runCreates(b, etcdCreate(startEtcd(b))) })
	b.Run("setpoint-bolt", func(b *testing.B) { runCreates(b, boltCreate(openBolt(b))) })
}

// BenchmarkList10k: read all 10,000 keys under a prefix.
func BenchmarkList10k(b *testing.B) {
	const keys = 10000
	prefix := "/registry/core/configmaps/default/"
	fillKeys := func(b *testing.B, create creator) {
		b.Helper()
		var wg sync.WaitGroup
		var next atomic.Int64
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := next.Add(1); i <= keys; i = next.Add(1) {
					if err := create(context.Background(), fmt.Sprintf("%scm-%08d", prefix, i)); err != nil {
						panic(err)
					}
				}
			}()
		}
		wg.Wait()
	}
	b.Run("etcd", func(b *testing.B) {
		c := startEtcd(b)
		fillKeys(b, etcdCreate(c))
		for b.Loop() {
			resp, err := c.Get(context.Background(), prefix, clientv3.WithPrefix())
			if err != nil || len(resp.Kvs) != keys {
				b.Fatalf("list: %v (%d keys)", err, len(resp.Kvs))
			}
		}
	})
	b.Run("setpoint-bolt", func(b *testing.B) {
		s := openBolt(b)
		fillKeys(b, boltCreate(s))
		for b.Loop() {
			res, err := s.List(context.Background(), prefix, storage.ListOptions{})
			if err != nil || len(res.KVs) != keys {
				b.Fatalf("list: %v (%d keys)", err, len(res.KVs))
			}
		}
	})
}
