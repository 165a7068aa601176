package discoveryv1

import (
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/registrytest"
)

func lookup(t testing.TB, name string) *registry.Resource {
	t.Helper()
	return registrytest.Find(t, Resources(), name)
}

var (
	create       = registrytest.Create
	update       = registrytest.Update
	updateStatus = registrytest.UpdateStatus
	expectErrors = registrytest.ExpectErrors
	expectValid  = registrytest.ExpectValid
	expectFields = registrytest.ExpectFields
)
