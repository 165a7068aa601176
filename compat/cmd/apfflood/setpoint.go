package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// startSetpoint runs `setpoint apiserver` from bin in a new data directory
// with the reference's limits (2 seats, a 4 s request timeout), as a
// process of its own, and returns how to reach it once it is ready.
func startSetpoint(ctx context.Context, bin string) (*server, func(), error) {
	dir, err := os.MkdirTemp("", "apfflood-setpoint-")
	if err != nil {
		return nil, nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, nil, errors.Join(err, os.RemoveAll(dir))
	}
	logf, err := os.Create(filepath.Join(dir, "setpoint.log"))
	if err != nil {
		return nil, nil, errors.Join(err, os.RemoveAll(dir))
	}
	data := filepath.Join(dir, "data")
	cmd := exec.Command(bin, "apiserver", "--data-dir", data, "--listen", "127.0.0.1:"+strconv.Itoa(port),
		"--log-level", "warn", "--max-requests-inflight=1", "--max-mutating-requests-inflight=1", "--request-timeout=4s")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, nil, errors.Join(err, logf.Close(), os.RemoveAll(dir))
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = logf.Close()
		_ = os.RemoveAll(dir)
	}
	s, err := waitSetpoint(ctx, data)
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("setpoint apiserver (log in %s): %w", logf.Name(), err)
	}
	return s, stop, nil
}

// waitSetpoint polls until the data directory's kubeconfig exists and
// /readyz answers ok, and returns the server it names.
func waitSetpoint(ctx context.Context, data string) (*server, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		if s, err := readySetpoint(data); err == nil {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func readySetpoint(data string) (*server, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(data, "kubeconfig"))
	if err != nil {
		return nil, err
	}
	s := &server{url: cfg.Host, caFile: filepath.Join(data, "pki", "ca.crt"), admin: cfg.BearerToken}
	tr, err := transport(s.caFile)
	if err != nil {
		return nil, err
	}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Timeout: time.Second, Transport: tr}).Get(s.url + "/readyz")
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("readyz: %d", resp.StatusCode)
	}
	return s, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
