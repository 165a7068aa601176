package openapi

import (
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/discovery"
	"github.com/setpoint-dev/setpoint/internal/registry/builtin"
)

func TestScratchBuiltin(t *testing.T) {
	start := time.Now()
	s, err := New(builtin.Resources(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("v3", time.Since(start))
	start = time.Now()
	j, p, err := s.current.Load().v2("x", s.opts.Logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("v2", time.Since(start), len(j.body), len(p.body))
	if _, err := discovery.New(builtin.Resources()); err != nil {
		t.Fatal(err)
	}
}
