package compat

import (
	"sort"
	"testing"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

// TestServed checks that setpoint serves every resource and subresource the
// reference serves, and nothing more. A resource that is not served is one
// difference here; the other categories skip its cases.
func TestServed(t *testing.T) {
	rep := difftest.NewReport(t, env.allow, "served", env.sink)
	defer rep.Finish()
	ids := make([]string, 0, len(env.refRes))
	for id := range env.refRes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		rep.Case()
		if _, ok := env.spRes[id]; !ok {
			rep.Add(id, "", "served", difftest.Absent)
		}
	}
	for id := range env.spRes {
		if _, ok := env.refRes[id]; !ok {
			rep.Add(id, "", difftest.Absent, "served")
		}
	}
}
