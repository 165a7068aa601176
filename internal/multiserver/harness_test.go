package multiserver_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controlplane"
	"github.com/setpoint-dev/setpoint/internal/storage/etcd/etcdtest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type configMaps = rest.Resource[*corev1.ConfigMap, *corev1.ConfigMapList]

// startServers starts n API servers on the etcd cluster c, sharing one PKI
// directory. The last one's kubeconfig names them all.
func startServers(t *testing.T, c *etcdtest.Cluster, n int) []*testserver.Server {
	t.Helper()
	pkiDir := t.TempDir()
	var out []*testserver.Server
	for range n {
		out = append(out, testserver.Start(t, testserver.Options{
			Storage: controlplane.StorageEtcd, EtcdEndpoints: c.Endpoints(), EtcdPrefix: "/multiserver",
			PKIDir: pkiDir,
		}))
	}
	return out
}

// newClient builds a client from cfg with no rate limit; its idle
// connections close when the test ends.
func newClient(t *testing.T, cfg *rest.Config) *rest.Client {
	t.Helper()
	cfg.QPS = -1
	c, err := rest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// only returns a client of server s alone (no failover).
func only(t *testing.T, s *testserver.Server) *rest.Client {
	t.Helper()
	cfg := s.RESTConfig(t)
	cfg.Host, cfg.Hosts = s.URL, nil
	return newClient(t, cfg)
}

func cms(c *rest.Client) *configMaps {
	return rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, corev1.SchemeGroupVersion.WithResource("configmaps"), true).Namespace("default")
}

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
}

// names lists the configmaps of a consistent list (resourceVersion "").
func names(t *testing.T, r *configMaps) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := r.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("consistent list: %v", err)
	}
	out := map[string]bool{}
	for _, cm := range list.Items {
		out[cm.Name] = true
	}
	return out
}

// missing returns the acknowledged names absent from have.
func missing(acked []string, have map[string]bool) []string {
	var out []string
	for _, n := range acked {
		if !have[n] {
			out = append(out, n)
		}
	}
	return out
}

// startEtcd starts a 3-member etcd cluster.
func startEtcd(t *testing.T) *etcdtest.Cluster { return etcdtest.StartCluster(t, 3) }

// leaderIndex returns the index of c's current leader.
func leaderIndex(t *testing.T, c *etcdtest.Cluster) int {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	for i, m := range c.Members() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		st, err := cli.Status(ctx, m.ClientURL)
		cancel()
		if err != nil {
			t.Fatalf("status of %s: %v", m.Name, err)
		}
		if st.Header.MemberId == st.Leader {
			return i
		}
	}
	t.Fatal("no etcd member is the leader")
	return -1
}
