package rest_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

// TestInClusterConfig builds a client as a pod would, from the service
// environment and a mounted token, CA and namespace, and checks that the
// token file is read again after TokenFileRereadPeriod and after a 401,
// as the kubelet rotates it in place.
func TestInClusterConfig(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	if _, err := rest.InClusterConfigFrom(t.TempDir()); !errors.Is(err, rest.ErrNotInCluster) {
		t.Fatalf("outside a pod: %v", err)
	}
	u, _ := url.Parse(srv.URL)
	host, port, _ := net.SplitHostPort(u.Host)
	t.Setenv("KUBERNETES_SERVICE_HOST", host)
	t.Setenv("KUBERNETES_SERVICE_PORT", port)

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ca.crt"), string(srv.API.CA().CertPEM))
	writeFile(t, filepath.Join(dir, "namespace"), "team-a\n")
	tokenFile := filepath.Join(dir, "token")
	writeFile(t, tokenFile, srv.Token+"\n")
	cfg, err := rest.InClusterConfigFrom(dir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://"+net.JoinHostPort(host, port) || cfg.Namespace != "team-a" || cfg.TLS.CAFile != filepath.Join(dir, "ca.crt") ||
		cfg.BearerTokenFile != tokenFile {
		t.Fatalf("config %+v", cfg)
	}
	clk := clocktesting.NewFakeClock(time.Now())
	cfg.Clock = clk
	cfg.MaxRetries = -1
	c, err := rest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	ctx := context.Background()
	if u, err := whoAmI(ctx, c); err != nil || u.Username != "setpoint-admin" {
		t.Fatalf("whoami: %+v, %v", u, err)
	}
	// A rotated (here: revoked) token is used once the period is over.
	writeFile(t, tokenFile, "revoked-token")
	if _, err := whoAmI(ctx, c); err != nil {
		t.Fatalf("within the period the token read first is used: %v", err)
	}
	clk.Step(rest.TokenFileRereadPeriod)
	if _, err := whoAmI(ctx, c); err == nil {
		t.Fatal("the revoked token was not read")
	}
	// A 401 reads the file again at once.
	writeFile(t, tokenFile, srv.Token)
	if u, err := whoAmI(ctx, c); err != nil || u.Username != "setpoint-admin" {
		t.Fatalf("after the 401: %+v, %v", u, err)
	}
	// A token file that disappears keeps the token last read.
	if err := os.Remove(tokenFile); err != nil {
		t.Fatal(err)
	}
	clk.Step(rest.TokenFileRereadPeriod)
	if _, err := whoAmI(ctx, c); err != nil {
		t.Fatalf("without the file: %v", err)
	}
}
