package apps

import "testing"

// BenchmarkDeploymentUpdate measures the main-resource update pipeline of
// a deployment whose image changes.
func BenchmarkDeploymentUpdate(b *testing.B) {
	r := lookup(b, "deployments")
	old := newDeployment()
	old.ResourceVersion = "1"
	create(r, old)
	b.ReportAllocs()
	for b.Loop() {
		d := old.DeepCopy()
		d.Spec.Template.Spec.Containers[0].Image = "nginx:2"
		if errs := update(r, d, old); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
