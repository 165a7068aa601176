package discovery_test

import (
	"testing"

	"github.com/setpoint-dev/setpoint/internal/discovery"
	"github.com/setpoint-dev/setpoint/internal/registry/builtin"
)

// BenchmarkBuild measures building every discovery document of the
// built-in resources (what every Update costs).
func BenchmarkBuild(b *testing.B) {
	resources := builtin.Resources()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := discovery.New(resources); err != nil {
			b.Fatal(err)
		}
	}
}
