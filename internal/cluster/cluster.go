package cluster

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/controllermanager"
	"github.com/setpoint-dev/setpoint/internal/controlplane"
	"github.com/setpoint-dev/setpoint/internal/pki"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

// Options configure a cluster.
type Options struct {
	// APIServer selects the data directory, address and store.
	APIServer controlplane.Options
	// Nodes is the number of simulated nodes (0: none).
	Nodes int
	// NoControllerManager leaves the controllers out, for a controller
	// manager run as its own process (`setpoint controller-manager`).
	// NoScheduler likewise leaves the scheduler out; with both and no
	// nodes the cluster is an API server alone.
	NoControllerManager, NoScheduler bool
	// ControllerManager, Scheduler and NodeAgent tune the components;
	// their Common part (config, logger, election) is filled in here.
	ControllerManager controllermanager.ControllerManagerOptions
	Scheduler         controllermanager.SchedulerOptions
	NodeAgent         controllermanager.NodesOptions
	// AdminComponents runs the components with the admin kubeconfig
	// (system:masters) instead of their own identities: the controller
	// manager as system:kube-controller-manager with each controller as its
	// ServiceAccount (--use-service-account-credentials), the scheduler as
	// system:kube-scheduler, each node as system:node:<name>.
	AdminComponents bool
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Cluster is a running cluster.
type Cluster struct {
	// API is the API server; Config reaches it as the admin.
	API    *apiserver.Server
	Config *rest.Config
	// ControllerManager, Scheduler and Nodes are the components' managers
	// (Nodes is nil without simulated nodes, ControllerManager and
	// Scheduler with Options.NoControllerManager and NoScheduler): the
	// first instance of each; a component that lost its leadership runs on
	// as a new manager (restart.go).
	ControllerManager, Scheduler, Nodes *manager.Manager

	// remake builds a component's manager anew, by name, for the
	// components that elect a leader.
	remake map[string]func() (*manager.Manager, error)
	log    *slog.Logger

	nodes   int
	started time.Time
	done    chan struct{}
	err     error
	// cancel asks the cluster to stop (as the end of Start's context
	// does); cancelAPI stops the API server, which run does only after
	// every component has stopped, so that they release their Leases and
	// flush their events against a live server.
	cancel, cancelAPI context.CancelFunc
}

// Start runs the cluster until ctx ends; see the package documentation.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	opts.APIServer.Logger = log.With("component", "apiserver")
	c := &Cluster{nodes: opts.Nodes, started: time.Now(), done: make(chan struct{}), remake: map[string]func() (*manager.Manager, error){}, log: log}
	srv, err := controlplane.NewAPIServer(opts.APIServer)
	if err != nil {
		return nil, err
	}
	c.API = srv
	ctx, c.cancel = context.WithCancel(ctx)
	apiCtx, cancelAPI := context.WithCancel(context.WithoutCancel(ctx))
	c.cancelAPI = cancelAPI
	apiDone := make(chan error, 1)
	go func() { apiDone <- srv.Run(apiCtx) }()
	select {
	case <-ctx.Done():
		cancelAPI()
		<-apiDone
		c.cancel()
		return nil, ctx.Err()
	case err := <-apiDone:
		c.cancel()
		cancelAPI()
		if err == nil {
			err = errors.New("API server stopped before it was ready")
		}
		return nil, err
	case <-srv.Ready():
	}
	if err := c.build(opts, log); err != nil {
		c.cancel()
		cancelAPI()
		<-apiDone
		return nil, err
	}
	go c.run(ctx, apiDone)
	return c, nil
}

// build makes the components' managers.
func (c *Cluster) build(opts Options, log *slog.Logger) error {
	cfg, err := rest.ConfigFromKubeconfig(c.API.KubeconfigPath(), "")
	if err != nil {
		return fmt.Errorf("cluster: read the admin kubeconfig: %w", err)
	}
	c.Config = cfg
	cmCfg, schedCfg := cfg, cfg
	if !opts.AdminComponents {
		if cmCfg, err = c.componentConfig(pki.ControllerManagerKubeconfig); err != nil {
			return err
		}
		if schedCfg, err = c.componentConfig(pki.SchedulerKubeconfig); err != nil {
			return err
		}
		credDir := opts.APIServer.PKIDir
		if credDir == "" {
			credDir = opts.APIServer.DataDir
		}
		if opts.Nodes > 0 && opts.NodeAgent.Agent.NodeCredentials == nil {
			if opts.NodeAgent.Agent.NodeCredentials, err = nodeCredentials(inProcess(cfg), credDir); err != nil {
				return err
			}
		}
		opts.ControllerManager.UseServiceAccountCredentials = true
		if !opts.NoControllerManager && !opts.ControllerManager.Provisioner.NoDefaultClass {
			// The default StorageClass is the installer's, as kind applies
			// its class at cluster creation: no controller's role may
			// create StorageClasses.
			if err := installDefaultClass(cfg, opts.ControllerManager.Provisioner.Name); err != nil {
				return err
			}
			opts.ControllerManager.Provisioner.NoDefaultClass = true
		}
	}
	common := func(in controllermanager.Common, cfg *rest.Config) controllermanager.Common {
		in.Config, in.Logger = inProcess(cfg), log
		if in.Election.Identity == "" {
			in.Election.Identity = identity(opts.APIServer.DataDir)
		}
		return in
	}
	if !opts.NoControllerManager {
		opts.ControllerManager.Common = common(opts.ControllerManager.Common, cmCfg)
		if opts.ControllerManager.ServiceAccountToken.Signer == nil {
			opts.ControllerManager.ServiceAccountToken.Signer = c.API.ServiceAccountIssuer()
		}
		cmOpts := opts.ControllerManager
		c.remake["controller manager"] = func() (*manager.Manager, error) { return controllermanager.NewControllerManager(cmOpts) }
		if c.ControllerManager, err = c.remake["controller manager"](); err != nil {
			return err
		}
	}
	if !opts.NoScheduler {
		opts.Scheduler.Common = common(opts.Scheduler.Common, schedCfg)
		schedOpts := opts.Scheduler
		c.remake["scheduler"] = func() (*manager.Manager, error) { return controllermanager.NewScheduler(schedOpts) }
		if c.Scheduler, err = c.remake["scheduler"](); err != nil {
			return err
		}
	}
	if opts.Nodes > 0 {
		opts.NodeAgent.Common = common(opts.NodeAgent.Common, cfg)
		opts.NodeAgent.Agent.Count = opts.Nodes
		if c.Nodes, err = controllermanager.NewNodes(opts.NodeAgent); err != nil {
			return err
		}
	}
	return nil
}

// inProcess is cfg for a component of this process: it reaches the API
// server on loopback, where compressing its streaming lists and watches
// would cost CPU on both ends and save nothing.
func inProcess(cfg *rest.Config) *rest.Config {
	local := *cfg
	local.DisableCompression = true
	return &local
}

// identity names this cluster's components in their Leases: stable for a
// data directory, so that a restart takes the Leases back at once.
func identity(dataDir string) string {
	h := fnv.New32a()
	h.Write([]byte(dataDir))
	return fmt.Sprintf("setpoint-up-%08x", h.Sum32())
}

// run starts the components and waits until one fails, the API server
// stops, or the cluster is asked to stop; then it stops the components and,
// last, the API server. A component that lost its leadership is not a
// failure: it is started again (restart.go), as a kubelet restarts a
// control-plane component that exited for it.
func (c *Cluster) run(ctx context.Context, apiDone <-chan error) {
	defer close(c.done)
	results := make(chan result, 3)
	running := 0
	compCtx, stopComps := context.WithCancel(ctx)
	// A nil *manager.Manager in the map is a component left out.
	for name, m := range map[string]*manager.Manager{
		"controller manager": c.ControllerManager, "scheduler": c.Scheduler, "node agent": c.Nodes,
	} {
		if m == nil {
			continue
		}
		running++
		go func() { results <- result{name, m.Start(compCtx)} }()
	}
	var errs []error
	restarts := map[string]int{}
	for stopping := false; !stopping; {
		select {
		case <-ctx.Done():
			stopping = true
		case r := <-results:
			running--
			if c.restartable(ctx, r) {
				restarts[r.name]++
				running++
				go func() { results <- c.restart(compCtx, r.name, restarts[r.name]) }()
				continue
			}
			if r.err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", r.name, r.err))
			}
			stopping = true
		case err := <-apiDone:
			apiDone = nil
			if err != nil {
				errs = append(errs, fmt.Errorf("apiserver: %w", err))
			}
			stopping = true
		}
	}
	stopComps()
	for ; running > 0; running-- {
		if r := <-results; r.err != nil && !errors.Is(r.err, manager.ErrLeaderElectionLost) {
			errs = append(errs, fmt.Errorf("%s: %w", r.name, r.err))
		}
	}
	c.cancel()
	c.cancelAPI()
	if apiDone != nil {
		if err := <-apiDone; err != nil {
			errs = append(errs, fmt.Errorf("apiserver: %w", err))
		}
	}
	c.err = errors.Join(errs...)
}

// Stop ends the cluster and waits for it.
func (c *Cluster) Stop() error {
	c.cancel()
	return c.Wait()
}

// Wait blocks until the cluster has stopped and returns why.
func (c *Cluster) Wait() error {
	<-c.done
	return c.err
}

// Done closes when the cluster has stopped.
func (c *Cluster) Done() <-chan struct{} { return c.done }

// WaitReady blocks until the controller manager and the scheduler lead and
// every simulated node is Ready, calling progress (if not nil) as each
// step completes. It fails when ctx ends or the cluster stops first.
func (c *Cluster) WaitReady(ctx context.Context, progress func(step string, after time.Duration)) error {
	report := func(step string) {
		if progress != nil {
			progress(step, time.Since(c.started))
		}
	}
	report("apiserver ready")
	type step struct {
		name string
		ch   <-chan struct{}
	}
	var steps []step
	if c.ControllerManager != nil {
		steps = append(steps, step{"controller manager leading", c.ControllerManager.Elected()})
	}
	if c.Scheduler != nil {
		steps = append(steps, step{"scheduler leading", c.Scheduler.Elected()})
	}
	for _, s := range steps {
		select {
		case <-s.ch:
			report(s.name)
		case <-c.done:
			return fmt.Errorf("cluster stopped: %w", c.err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if c.nodes == 0 {
		return nil
	}
	if err := c.waitNodes(ctx); err != nil {
		return err
	}
	report(fmt.Sprintf("%d nodes ready", c.nodes))
	return nil
}

// waitNodes polls until at least c.nodes nodes are Ready.
func (c *Cluster) waitNodes(ctx context.Context) error {
	cfg := *c.Config
	cfg.QPS = -1 // polls every 50ms, over client-go's default 5 per second
	client, err := rest.New(&cfg)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	nodes := rest.For[*corev1.Node, *corev1.NodeList](client, corev1.SchemeGroupVersion.WithResource("nodes"), false)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		list, err := nodes.List(ctx, metav1.ListOptions{})
		if err == nil && countReady(list.Items) >= c.nodes {
			return nil
		}
		select {
		case <-tick.C:
		case <-c.done:
			return fmt.Errorf("cluster stopped: %w", c.err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func countReady(nodes []corev1.Node) int {
	n := 0
	for i := range nodes {
		for _, cond := range nodes[i].Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}
