package refcluster_test

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/compat/refcluster"
)

// TestRestartOnSameDir stops a cluster and starts another on its
// directory and ports: the credentials and the data are still there.
func TestRestartOnSameDir(t *testing.T) {
	opts := refcluster.Options{Dir: t.TempDir(), Ports: refcluster.Ports{
		APIServer: freePort(t), EtcdClient: freePort(t), EtcdPeer: freePort(t),
	}}
	first := refcluster.StartT(t, opts)
	client := first.HTTPClient()
	body := `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kept"}}`
	resp, err := client.Post(first.URL()+"/api/v1/namespaces", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create namespace = %d, want 201", resp.StatusCode)
	}
	client.CloseIdleConnections()
	token := first.Token()
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}

	second, err := refcluster.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { second.Stop() })
	if second.Token() != token {
		t.Error("the admin token changed across the restart")
	}
	client = second.HTTPClient()
	defer client.CloseIdleConnections()
	resp, err = client.Get(second.URL() + "/api/v1/namespaces/kept")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET namespace kept after restart = %d, want 200", resp.StatusCode)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestStartFailure: a kube-apiserver that cannot start makes Start fail
// with the end of its log, and leaves nothing running (etcd, started
// first, is stopped: its port is free again).
func TestStartFailure(t *testing.T) {
	etcdPort := freePort(t)
	_, err := refcluster.Start(context.Background(), refcluster.Options{
		Dir:           t.TempDir(),
		Ports:         refcluster.Ports{EtcdClient: etcdPort},
		APIServerArgs: []string{"--no-such-flag"},
	})
	if err == nil || !strings.Contains(err.Error(), "kube-apiserver exited") || !strings.Contains(err.Error(), "unknown flag: --no-such-flag") {
		t.Fatalf("Start = %v, want kube-apiserver's exit with its log", err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(etcdPort)))
	if err != nil {
		t.Fatalf("etcd's port still taken after the failed start: %v", err)
	}
	ln.Close()
}
