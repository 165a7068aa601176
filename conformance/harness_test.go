package conformance

import (
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/setpoint-dev/setpoint/testenv"
)

// startSetpoint runs a setpoint control plane for the test (see
// testenv.Options) and stops it when the test ends.
func startSetpoint(t *testing.T, opts testenv.Options) *testenv.Environment {
	t.Helper()
	env, err := testenv.Start(opts)
	if err != nil {
		t.Fatalf("start setpoint: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop setpoint: %v", err)
		}
	})
	return env
}

// clientConfig is client-go's rest.Config for the environment, read from
// its kubeconfig with client-go's own loader. Client-side rate limits are
// off, as controller-runtime's are by default.
func clientConfig(t *testing.T, env *testenv.Environment) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", env.Kubeconfig)
	if err != nil {
		t.Fatalf("client-go could not load setpoint's kubeconfig: %v", err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	return cfg
}

// clientset is a client-go typed clientset for the environment.
func clientset(t *testing.T, env *testenv.Environment) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(clientConfig(t, env))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
