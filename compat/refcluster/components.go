package refcluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// etcdArgs: one member, data in Dir/etcd, fsync kept as in production
// unless EtcdArgs says otherwise.
func (c *Cluster) etcdArgs() []string {
	peer := "http://127.0.0.1:" + strconv.Itoa(c.opts.Ports.EtcdPeer)
	args := []string{
		c.opts.Binaries.Etcd,
		"--name", "refcluster", "--data-dir", filepath.Join(c.opts.Dir, "etcd"),
		"--listen-client-urls", c.etcdURL, "--advertise-client-urls", c.etcdURL,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "refcluster=" + peer, "--initial-cluster-state", "new",
		"--log-level", "warn",
	}
	return append(args, c.opts.EtcdArgs...)
}

// apiServerArgs are what kubeadm gives kube-apiserver that a loopback,
// single-host cluster needs: static-token authentication (the admin in
// system:masters, the components as their bootstrap RBAC users), client
// certificates signed by the cluster CA, service-account tokens, Node and
// RBAC authorization, privileged containers allowed.
func (c *Cluster) apiServerArgs() []string {
	cr := c.creds
	args := []string{
		c.opts.Binaries.APIServer,
		"--etcd-servers=" + c.etcdURL,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(c.opts.Ports.APIServer),
		"--advertise-address=" + c.opts.AdvertiseAddress,
		"--tls-cert-file=" + cr.servingCert,
		"--tls-private-key-file=" + cr.servingKey,
		"--client-ca-file=" + cr.caCert,
		"--token-auth-file=" + cr.tokenFile,
		"--service-account-issuer=" + serviceAccountIssuer,
		"--service-account-key-file=" + cr.saPub,
		"--service-account-signing-key-file=" + cr.saKey,
		"--service-cluster-ip-range=" + serviceClusterIPRange,
		"--authorization-mode=Node,RBAC",
		"--allow-privileged=true",
	}
	return append(args, c.opts.APIServerArgs...)
}

// controllerManagerArgs follow kubeadm: every controller (plus the
// bootstrap-token ones), each with its own service account, signing CSRs
// with the cluster CA and publishing it as kube-root-ca.crt.
func (c *Cluster) controllerManagerArgs() []string {
	cr := c.creds
	kc := filepath.Join(c.opts.Dir, "controller-manager.kubeconfig")
	args := []string{
		c.opts.Binaries.ControllerManager,
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(c.opts.Ports.ControllerManager),
		"--controllers=*,bootstrapsigner,tokencleaner",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + cr.saKey,
		"--root-ca-file=" + cr.caCert,
		"--cluster-signing-cert-file=" + cr.caCert,
		"--cluster-signing-key-file=" + cr.caKey,
		"--service-cluster-ip-range=" + serviceClusterIPRange,
	}
	return append(args, c.opts.ControllerManagerArgs...)
}

func (c *Cluster) schedulerArgs() []string {
	kc := filepath.Join(c.opts.Dir, "scheduler.kubeconfig")
	args := []string{
		c.opts.Binaries.Scheduler,
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(c.opts.Ports.Scheduler),
	}
	return append(args, c.opts.SchedulerArgs...)
}

func (c *Cluster) waitEtcd(ctx context.Context, p *process) error {
	client := &http.Client{Timeout: 2 * time.Second}
	return poll(ctx, p, func() bool {
		code, body := get(ctx, client, c.etcdURL+"/health")
		return code == http.StatusOK && strings.Contains(body, `"true"`)
	})
}

func (c *Cluster) waitAPIServer(ctx context.Context, p *process) error {
	client := c.HTTPClient()
	defer client.CloseIdleConnections()
	return poll(ctx, p, func() bool {
		code, body := get(ctx, client, c.url+"/readyz")
		return code == http.StatusOK && body == "ok"
	})
}

// waitControllerManager waits for the service-account controller to give
// the default namespace its ServiceAccount: from then on Pods can be
// created in it (and in any namespace created later, once its own default
// ServiceAccount exists).
func (c *Cluster) waitControllerManager(ctx context.Context, p *process) error {
	client := c.HTTPClient()
	defer client.CloseIdleConnections()
	return poll(ctx, p, func() bool {
		code, _ := get(ctx, client, c.url+"/api/v1/namespaces/default/serviceaccounts/default")
		return code == http.StatusOK
	})
}

func (c *Cluster) waitScheduler(ctx context.Context, p *process) error {
	// kube-scheduler serves a certificate it signed itself; only its
	// liveness is asked here.
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed, loopback
	}}
	defer client.CloseIdleConnections()
	return poll(ctx, p, func() bool {
		code, body := get(ctx, client, "https://127.0.0.1:"+strconv.Itoa(c.opts.Ports.Scheduler)+"/healthz")
		return code == http.StatusOK && body == "ok"
	})
}

// poll calls ready every 50 ms until it returns true, p exits or ctx ends.
func poll(ctx context.Context, p *process, ready func() bool) error {
	for {
		if err := p.alive(); err != nil {
			return err
		}
		if ready() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("refcluster: %s not ready: %w; its log ends:\n%s", p.name, ctx.Err(), p.tail(30))
		case <-p.exited:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// get returns the status code and body of a GET, or 0 if it failed.
func get(ctx context.Context, client *http.Client, url string) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, ""
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, string(body)
}
