package apps

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
)

// The warnings kube-apiserver sends with writes of the workloads: those of
// the pod template (podspec.TemplateWarnings) on create and on an update
// that moves the generation (however little of the template it changes),
// and a few of each kind's own.

var templatePath = field.NewPath("spec", "template")

// deploymentWarnings: a deployment's generation moves with its spec and
// with its annotations (which its replica sets copy).
func deploymentWarnings(d, old *appsv1.Deployment) []string {
	if old == nil {
		return append(podspec.NameWarning(d.Name), podspec.TemplateWarnings(&d.Spec.Template, templatePath)...)
	}
	if apiequality.Semantic.DeepEqual(d.Spec, old.Spec) && apiequality.Semantic.DeepEqual(d.Annotations, old.Annotations) {
		return nil
	}
	return podspec.TemplateWarnings(&d.Spec.Template, templatePath)
}

func replicaSetWarnings(rs, old *appsv1.ReplicaSet) []string {
	if old == nil {
		return append(podspec.NameWarning(rs.Name), podspec.TemplateWarnings(&rs.Spec.Template, templatePath)...)
	}
	if apiequality.Semantic.DeepEqual(rs.Spec, old.Spec) {
		return nil
	}
	return podspec.TemplateWarnings(&rs.Spec.Template, templatePath)
}

// daemonSetWarnings: on update, only a change of the template (which moves
// the template generation) warns.
func daemonSetWarnings(ds, old *appsv1.DaemonSet) []string {
	if old != nil && templateGeneration(ds) == templateGeneration(old) {
		return nil
	}
	return podspec.TemplateWarnings(&ds.Spec.Template, templatePath)
}

// statefulSetWarnings adds, on every write, the claim templates' storage
// in fractional bytes and a negative revision history limit. The claim
// templates' paths are kube-apiserver's: without "spec" on create, with
// "Spec" on update.
func statefulSetWarnings(s, old *appsv1.StatefulSet) []string {
	var out []string
	if old == nil || !apiequality.Semantic.DeepEqual(s.Spec, old.Spec) {
		out = podspec.TemplateWarnings(&s.Spec.Template, templatePath)
	}
	for i := range s.Spec.VolumeClaimTemplates {
		p := field.NewPath("spec", "volumeClaimTemplates").Index(i)
		if old != nil {
			p = p.Child("Spec")
		}
		out = append(out, podspec.ClaimSpecWarnings(&s.Spec.VolumeClaimTemplates[i].Spec, p)...)
	}
	if l := s.Spec.RevisionHistoryLimit; l != nil && *l < 0 {
		out = append(out, fmt.Sprintf("%s: a negative value retains all historical revisions; a value >= 0 is recommended", field.NewPath("spec", "revisionHistoryLimit")))
	}
	return out
}
