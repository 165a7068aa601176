package manager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/leaderelection"
)

// ErrLeaderElectionLost is returned by Start when this manager stopped
// leading while its context was still live.
var ErrLeaderElectionLost = errors.New("manager: leader election lost")

// group is a set of runnables sharing one context.
type group struct {
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// Start runs the manager until ctx ends or something fails, then shuts
// down gracefully; see the package documentation for the order. It returns
// nil after a clean stop on ctx's end, ErrLeaderElectionLost (wrapped) when
// leadership was lost, the first error of a runnable, a cache-sync timeout
// that names the resources and why they did not sync, or a shutdown that
// exceeded GracefulShutdownTimeout. Start may be called once.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	if m.started {
		m.mu.Unlock()
		return errors.New("manager: already started")
	}
	m.started = true
	leaders, others := m.leaderRunnables, m.others
	m.mu.Unlock()

	var servers serverSet
	if err := servers.listen(m); err != nil {
		return err
	}
	base := context.WithoutCancel(ctx)
	infCtx, stopInformers := context.WithCancel(base)
	m.mu.Lock()
	m.infCtx = infCtx
	m.mu.Unlock()
	m.factory.Start(infCtx)

	var srcs []controller.Source
	for _, t := range m.trackedInformers() {
		srcs = append(srcs, t)
	}
	if err := controller.WaitForSync(ctx, m.opts.Clock, m.opts.CacheSyncTimeout, srcs...); err != nil {
		stopInformers()
		m.factory.Shutdown()
		m.stopEvents()
		servers.close()
		return fmt.Errorf("manager: %w", err)
	}

	errs := make(chan error, len(leaders)+len(others)+1)
	var oth group
	othCtx, stop := context.WithCancel(base)
	oth.stop = stop
	for _, r := range others {
		oth.wg.Go(func() { m.run(othCtx, r, errs) })
	}
	close(m.ready)

	var lead group
	leadCtx, stop := context.WithCancel(base)
	lead.stop = stop
	lost := make(chan struct{})
	if err := m.startLeading(leadCtx, &lead, leaders, errs, lost); err != nil {
		errs <- err
	}

	var cause error
	select {
	case <-ctx.Done():
		m.log.Info("stopping manager")
	case cause = <-errs:
		m.log.Error("stopping manager after a failure", "err", cause)
	case <-lost:
		cause = ErrLeaderElectionLost
		m.log.Error("leadership lost; stopping manager")
	}
	return errors.Join(cause, m.shutdown(&lead, &oth, stopInformers, &servers))
}

// startLeading runs the leader-election runnables: at once without leader
// election, else each time this candidate wins the Lease. lost is closed
// if leadership ends while ctx is live.
func (m *Manager) startLeading(ctx context.Context, g *group, leaders []Runnable, errs chan<- error, lost chan struct{}) error {
	var once sync.Once
	elected := func() { once.Do(func() { close(m.elected) }) }
	if !m.opts.LeaderElection {
		elected()
		for _, r := range leaders {
			g.wg.Go(func() { m.run(ctx, r, errs) })
		}
		return nil
	}
	le, err := leaderelection.New(leaderelection.Config{
		Lock: &leaderelection.LeaseLock{Namespace: m.opts.LeaderElectionNamespace, Name: m.opts.LeaderElectionID,
			Identity: m.opts.LeaderElectionIdentity, Client: m.client},
		LeaseDuration: m.opts.LeaseDuration, RenewDeadline: m.opts.RenewDeadline, RetryPeriod: m.opts.RetryPeriod,
		ReleaseOnCancel: true, Clock: m.opts.Clock, Logger: m.log,
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: func(lctx context.Context) {
				if f := m.opts.OnStartedLeading; f != nil {
					f()
				}
				elected()
				var wg sync.WaitGroup
				for _, r := range leaders {
					wg.Go(func() { m.run(lctx, r, errs) })
				}
				wg.Wait()
				if f := m.opts.OnStoppedLeading; f != nil {
					f()
				}
			},
			OnStoppedLeading: func() {
				if ctx.Err() == nil {
					close(lost)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("manager: leader election: %w", err)
	}
	m.leHealth.SetLeaderElection(le)
	g.wg.Go(func() { le.Run(ctx) })
	return nil
}

func (m *Manager) run(ctx context.Context, r Runnable, errs chan<- error) {
	if err := r.Start(ctx); err != nil {
		errs <- fmt.Errorf("runnable %T: %w", r, err)
	}
}

// shutdown stops, in order: the leader-election runnables (controllers
// drain their in-flight reconciles) and then the election, which releases
// the Lease; the other runnables; the informers; the HTTP servers. The
// first three are bounded by GracefulShutdownTimeout.
func (m *Manager) shutdown(lead, oth *group, stopInformers context.CancelFunc, servers *serverSet) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		lead.stop()
		lead.wg.Wait()
		oth.stop()
		oth.wg.Wait()
		m.stopEvents()
		stopInformers()
		m.factory.Shutdown()
	}()
	var err error
	if m.opts.GracefulShutdownTimeout < 0 {
		<-done
	} else {
		t := m.opts.Clock.NewTimer(m.opts.GracefulShutdownTimeout)
		select {
		case <-done:
			t.Stop()
		case <-t.C():
			err = fmt.Errorf("manager: graceful shutdown did not finish within %s", m.opts.GracefulShutdownTimeout)
		}
	}
	servers.close()
	m.log.Info("manager stopped")
	return err
}

// serverSet is the metrics and health servers of one Start.
type serverSet struct {
	servers []*http.Server
	wg      sync.WaitGroup
}

func (s *serverSet) listen(m *Manager) error {
	for _, srv := range []struct {
		addr    string
		handler http.Handler
		bound   *string
	}{{m.opts.MetricsAddr, m.metricsHandler(), &m.metricsAddr}, {m.opts.HealthAddr, m.healthHandler(), &m.healthAddr}} {
		if srv.addr == "0" {
			continue
		}
		ln, err := net.Listen("tcp", srv.addr)
		if err != nil {
			s.close()
			return fmt.Errorf("manager: listen on %s: %w", srv.addr, err)
		}
		hs := &http.Server{Handler: srv.handler, ReadHeaderTimeout: 10 * time.Second}
		s.servers = append(s.servers, hs)
		m.mu.Lock()
		*srv.bound = ln.Addr().String()
		m.mu.Unlock()
		s.wg.Go(func() { _ = hs.Serve(ln) })
	}
	return nil
}

func (s *serverSet) close() {
	for _, hs := range s.servers {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := hs.Shutdown(ctx); err != nil {
			_ = hs.Close()
		}
		cancel()
	}
	s.wg.Wait()
}
