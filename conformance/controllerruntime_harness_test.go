package conformance

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// crLogOnce silences controller-runtime's global logger (it warns once
// when none was set); each manager gets its own logger below.
var crLogOnce sync.Once

// crScheme is the scheme controller-runtime users start from: client-go's
// built-in kinds.
func crScheme() *runtime.Scheme { return clientgoscheme.Scheme }

// crManagerOptions are the options every manager of these tests starts
// from: client-go's scheme, no metrics or probe listeners (several
// managers share the process), controller names not checked for
// uniqueness across the process (each test builds its own controllers).
func crManagerOptions(t testing.TB) manager.Options {
	crLogOnce.Do(func() { log.SetLogger(logr.Discard()) })
	return manager.Options{
		Scheme:     crScheme(),
		Logger:     logr.Discard(),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
}

// crRunning is a started manager: stop cancels its context and returns
// what Start returned.
type crRunning struct {
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// crStart starts mgr in the background; the test's cleanup stops it and
// fails the test if Start returned an error other than on cancel.
func crStart(t testing.TB, mgr manager.Manager) *crRunning {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &crRunning{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		if err := r.stop(); err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return r
}

// stop cancels the manager and waits (at most 30 s) for Start to return.
func (r *crRunning) stop() error {
	r.once.Do(func() {
		r.cancel()
		select {
		case r.err = <-r.done:
		case <-time.After(30 * time.Second):
			r.err = errors.New("manager did not stop within 30s")
		}
	})
	return r.err
}

// crEventually polls cond every 50 ms until it reports done, and fails the
// test with cond's last message after timeout.
func crEventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %s", what, timeout, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// crWaitClosed waits for ch (e.g. mgr.Elected()) to close.
func crWaitClosed(t testing.TB, ch <-chan struct{}, timeout time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(timeout):
		t.Fatalf("%s: not within %v", what, timeout)
	}
}

func crClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// crRestConfig is what a controller-runtime user builds: the kubeconfig
// loaded by client-go's clientcmd, client-side rate limits off (as in
// clientConfig).
func crRestConfig(t testing.TB, kubeconfig string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("clientcmd could not load setpoint's kubeconfig: %v", err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	return cfg
}
