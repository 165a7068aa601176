package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/storage/etcd/etcdtest"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/rest"
)

// startReplica runs `setpoint apiserver --storage etcd` as one replica of a
// cluster whose credentials are in pkiDir, and waits until it is ready.
func startReplica(t *testing.T, pkiDir string, endpoints []string) *server {
	t.Helper()
	dataDir := t.TempDir()
	s := &server{
		dataDir: dataDir, addr: "127.0.0.1:" + strconv.Itoa(freePort(t)),
		kubeconfig: filepath.Join(dataDir, "kubeconfig"), log: &bytes.Buffer{}, exited: make(chan struct{}),
	}
	s.cmd = exec.Command(setpointBin, "apiserver", "--data-dir", dataDir, "--listen", s.addr,
		"--storage", "etcd", "--etcd-endpoints", strings.Join(endpoints, ","), "--etcd-prefix", "/e2e",
		"--pki-dir", pkiDir)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start setpoint: %v", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(s.stop)
	s.waitReady(t)
	return s
}

// TestMultiServerOnEtcd runs two `setpoint apiserver` processes on a
// 3-member etcd with one --pki-dir. The shared kubeconfig names both:
// kubectl reaches each through its context and sees the same objects; a
// rest client loaded from it keeps creating through replica B after
// replica A (its current server) is killed with SIGKILL, and every
// acknowledged write is there.
func TestMultiServerOnEtcd(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 3)
	pkiDir := filepath.Join(t.TempDir(), "pki")
	b := startReplica(t, pkiDir, c.Endpoints())
	a := startReplica(t, pkiDir, c.Endpoints()) // started last: the current context
	shared := &server{kubeconfig: filepath.Join(pkiDir, "kubeconfig")}
	for _, f := range []string{"pki/ca.crt", "pki/ca.key", "tokens.csv", "servers", "kubeconfig"} {
		if _, err := os.Stat(filepath.Join(pkiDir, f)); err != nil {
			t.Fatalf("shared credentials: %v", err)
		}
	}
	shared.kubectl(t, "", "create", "configmap", "via-a")
	ctxB := "setpoint-" + b.addr
	out := shared.kubectl(t, "", "--context", ctxB, "get", "configmap", "via-a", "-o", "name")
	if strings.TrimSpace(out) != "configmap/via-a" {
		t.Fatalf("kubectl through replica B: %q", out)
	}
	if got := shared.kubectl(t, "", "config", "view", "-o", "jsonpath={.clusters[*].cluster.server}"); !strings.Contains(got, a.addr) || !strings.Contains(got, b.addr) {
		t.Fatalf("shared kubeconfig servers %q, want %s and %s", got, a.addr, b.addr)
	}

	cfg, err := rest.ConfigFromKubeconfig(shared.kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS = -1 // not paced by the client default of 5 requests per second
	if cfg.Host != "https://"+a.addr {
		t.Fatalf("current server %s, want replica A %s", cfg.Host, a.addr)
	}
	client, err := rest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseIdleConnections()
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](client, corev1.SchemeGroupVersion.WithResource("configmaps"), true).Namespace("default")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const writers = 4
	var (
		mu    sync.Mutex
		acked []string
		errs  []error
		wg    sync.WaitGroup
		stop  = make(chan struct{})
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("load-%d-%d", w, i)
				_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					acked = append(acked, name)
				}
				mu.Unlock()
			}
		}()
	}
	waitCount := func(n int) {
		t.Helper()
		testwait.UntilEvery(t, 30*time.Second, 10*time.Millisecond, "acknowledged writes", func() error {
			mu.Lock()
			defer mu.Unlock()
			if len(acked) < n {
				return fmt.Errorf("%d writes acknowledged, want %d; errors %v", len(acked), n, errs)
			}
			return nil
		})
	}
	waitCount(50)
	a.kill()
	mu.Lock()
	atKill := len(acked)
	mu.Unlock()
	waitCount(atKill + 100)
	close(stop)
	wg.Wait()
	t.Logf("%d acknowledged (%d at the kill), %d failed: %v", len(acked), atKill, len(errs), errs)
	if len(errs) > writers {
		t.Fatalf("%d failed writes, want at most %d: %v", len(errs), writers, errs)
	}
	if client.Host() != "https://"+b.addr {
		t.Fatalf("client on %s after the kill, want %s", client.Host(), b.addr)
	}
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, cm := range list.Items {
		have[cm.Name] = true
	}
	for _, n := range acked {
		if !have[n] {
			t.Fatalf("acknowledged write %s missing after the kill", n)
		}
	}
}
