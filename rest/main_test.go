package rest_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

// TestMain fails the package if a test leaves a goroutine behind: watch
// decoders, retry waits and the servers the tests start must all stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// start runs a real API server and returns a client built from the
// kubeconfig that server wrote.
func start(t *testing.T, tune func(*apiserver.Config)) (*testserver.Server, *rest.Client) {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{Tune: tune})
	return srv, srv.RESTClient(t)
}
