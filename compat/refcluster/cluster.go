package refcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

const (
	// serviceClusterIPRange is --service-cluster-ip-range, kubeadm's default.
	serviceClusterIPRange = "10.96.0.0/12"
	// kubernetesServiceIP is the first address of that range, the cluster
	// IP of the default/kubernetes Service.
	kubernetesServiceIP = "10.96.0.1"
	// serviceAccountIssuer is --service-account-issuer, kubeadm's default.
	serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"
	// stopGrace is how long a component may take to exit after SIGTERM.
	stopGrace = 15 * time.Second
)

// Options describe a reference cluster; the zero value is etcd and
// kube-apiserver alone on free ports in a new temporary directory.
type Options struct {
	// ControllerManager runs kube-controller-manager: namespaces get their
	// default ServiceAccount, Deployments their ReplicaSets and Pods, and
	// so on. Start then waits for default/default to exist.
	ControllerManager bool
	// Scheduler runs kube-scheduler (useful only with nodes to bind to).
	Scheduler bool
	// Dir holds credentials, etcd's data, logs and the kubeconfigs. Default
	// a new temporary directory, removed by Stop. A Dir used before keeps
	// its credentials and data (start it with the same Ports).
	Dir string
	// Ports fixes the listening ports; zero fields get free ones.
	Ports Ports
	// AdvertiseAddress is kube-apiserver's --advertise-address, the
	// endpoint of the default/kubernetes Service. kube-apiserver refuses a
	// loopback address; the default is the first non-loopback IPv4 address
	// of this host, else 10.0.0.1 (the address is only published, never
	// dialled).
	AdvertiseAddress string
	// Binaries are the executables; default FindBinaries().
	Binaries *Binaries
	// EtcdArgs, APIServerArgs, ControllerManagerArgs and SchedulerArgs are
	// appended to the components' command lines (a later flag wins); e.g.
	// EtcdArgs: []string{"--unsafe-no-fsync"} for a test that writes much
	// and never restarts the cluster.
	EtcdArgs, APIServerArgs, ControllerManagerArgs, SchedulerArgs []string
	// ReadyTimeout bounds the wait for each component (default 90 s).
	ReadyTimeout time.Duration
}

// Ports are the loopback ports of the components.
type Ports struct {
	APIServer, EtcdClient, EtcdPeer, ControllerManager, Scheduler int
}

// Cluster is a running reference cluster.
type Cluster struct {
	opts     Options
	ownDir   bool
	creds    *credentials
	url      string
	etcdURL  string
	kubeconf string
	procs    []*process // in start order
}

// Start runs a cluster and returns once kube-apiserver answers /readyz
// (and, when enabled, the controller manager has created the default
// ServiceAccount and the scheduler answers /healthz). ctx bounds the
// start-up only. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	c := &Cluster{opts: opts}
	if err := c.prepare(); err != nil {
		c.removeDir()
		return nil, err
	}
	if err := c.start(ctx); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

// prepare fills in defaults, picks ports and writes the credentials and
// kubeconfigs.
func (c *Cluster) prepare() error {
	o := &c.opts
	if o.Dir == "" {
		dir, err := os.MkdirTemp("", "refcluster-")
		if err != nil {
			return fmt.Errorf("refcluster: %w", err)
		}
		o.Dir, c.ownDir = dir, true
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 90 * time.Second
	}
	if o.AdvertiseAddress == "" {
		o.AdvertiseAddress = hostIPv4()
	}
	if o.Binaries == nil {
		b, err := FindBinaries()
		if err != nil {
			return err
		}
		o.Binaries = &b
	}
	for _, p := range []*int{&o.Ports.APIServer, &o.Ports.EtcdClient, &o.Ports.EtcdPeer, &o.Ports.ControllerManager, &o.Ports.Scheduler} {
		if *p == 0 {
			port, err := freePort()
			if err != nil {
				return err
			}
			*p = port
		}
	}
	for _, d := range []string{"logs", "etcd"} {
		if err := os.MkdirAll(filepath.Join(o.Dir, d), 0o700); err != nil {
			return fmt.Errorf("refcluster: %w", err)
		}
	}
	creds, err := ensureCredentials(o.Dir, o.AdvertiseAddress)
	if err != nil {
		return err
	}
	c.creds = creds
	c.url = "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(o.Ports.APIServer))
	c.etcdURL = "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(o.Ports.EtcdClient))
	c.kubeconf = filepath.Join(o.Dir, "kubeconfig")
	return c.writeKubeconfigs()
}

func (c *Cluster) start(ctx context.Context) error {
	steps := []struct {
		name  string
		on    bool
		argv  []string
		ready func(context.Context, *process) error
	}{
		{"etcd", true, c.etcdArgs(), c.waitEtcd},
		{"kube-apiserver", true, c.apiServerArgs(), c.waitAPIServer},
		{"kube-controller-manager", c.opts.ControllerManager, c.controllerManagerArgs(), c.waitControllerManager},
		{"kube-scheduler", c.opts.Scheduler, c.schedulerArgs(), c.waitScheduler},
	}
	for _, s := range steps {
		if !s.on {
			continue
		}
		p, err := startProcess(s.name, filepath.Join(c.opts.Dir, "logs", s.name+".log"), s.argv)
		if err != nil {
			return err
		}
		c.procs = append(c.procs, p)
		readyCtx, cancel := context.WithTimeout(ctx, c.opts.ReadyTimeout)
		err = s.ready(readyCtx, p)
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

// Stop ends the components in reverse start order (kube-apiserver before
// etcd, or it hangs on shutdown) and removes the directory if Start created
// it. Calling it again does nothing.
func (c *Cluster) Stop() error {
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop(stopGrace)
	}
	c.procs = nil
	return c.removeDir()
}

func (c *Cluster) removeDir() error {
	if !c.ownDir {
		return nil
	}
	c.ownDir = false
	if err := os.RemoveAll(c.opts.Dir); err != nil {
		return fmt.Errorf("refcluster: %w", err)
	}
	return nil
}

// Wait blocks until ctx ends (it returns nil) or a component exits (it
// returns an error naming the component, with the end of its log).
func (c *Cluster) Wait(ctx context.Context) error {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, p := range c.procs {
			if err := p.alive(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Process is one running component of a cluster.
type Process struct {
	Name string // etcd, kube-apiserver, kube-controller-manager, kube-scheduler
	PID  int
}

// Processes lists the running components in start order, for a caller that
// measures them (resident memory, CPU time from /proc).
func (c *Cluster) Processes() []Process {
	out := make([]Process, 0, len(c.procs))
	for _, p := range c.procs {
		out = append(out, Process{Name: p.name, PID: p.cmd.Process.Pid})
	}
	return out
}

// URL is kube-apiserver's https address (https://127.0.0.1:port).
func (c *Cluster) URL() string { return c.url }

// Kubeconfig is the path of the admin kubeconfig (user admin, group
// system:masters, bearer token).
func (c *Cluster) Kubeconfig() string { return c.kubeconf }

// Token is the admin's bearer token.
func (c *Cluster) Token() string { return c.creds.adminToken }

// CAFile is the path of the CA certificate that signed kube-apiserver's
// serving certificate (curl --cacert).
func (c *Cluster) CAFile() string { return c.creds.caCert }

// Dir is the cluster's directory: pki/, etcd/, logs/ and the kubeconfigs.
func (c *Cluster) Dir() string { return c.opts.Dir }

// EtcdURL is etcd's client URL (plain http on loopback).
func (c *Cluster) EtcdURL() string { return c.etcdURL }

// HTTPClient returns a client that trusts the cluster's CA and sends the
// admin's bearer token on every request.
func (c *Cluster) HTTPClient() *http.Client {
	return &http.Client{Transport: &bearer{token: c.creds.adminToken, next: c.transport()}}
}

func (c *Cluster) transport() *http.Transport {
	pool := x509.NewCertPool()
	if b, err := os.ReadFile(c.creds.caCert); err == nil {
		pool.AppendCertsFromPEM(b)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return t
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b *bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("refcluster: pick a port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// hostIPv4 returns the first non-loopback IPv4 address of an up
// interface, or 10.0.0.1.
func hostIPv4() string {
	ifaces, _ := net.Interfaces()
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := iface.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
				return n.IP.String()
			}
		}
	}
	return "10.0.0.1"
}
