package apps

import (
	"testing"
)

// TestStatusUpdateMetadata checks what a status update may change of the
// metadata, as kube-apiserver's status strategies decide: a ReplicaSet's
// keeps every metadata change; a Deployment's keeps all but its labels.
func TestStatusUpdateMetadata(t *testing.T) {
	rs := newReplicaSet()
	expectValid(t, create(lookup(t, "replicasets"), rs))
	st := rs.DeepCopy()
	st.Labels = map[string]string{"patched": "yes"}
	st.Annotations = map[string]string{"status-patched": "yes"}
	expectValid(t, updateStatus(lookup(t, "replicasets"), st, rs))
	if st.Labels["patched"] != "yes" || st.Annotations["status-patched"] != "yes" {
		t.Errorf("replicaset status update: labels %v annotations %v, want both kept", st.Labels, st.Annotations)
	}

	old := storedDeployment(t)
	old.Labels = map[string]string{"app": "web"}
	d := old.DeepCopy()
	d.Labels = map[string]string{"patched": "yes"}
	d.Annotations = map[string]string{"deployment.kubernetes.io/revision": "2"}
	expectValid(t, updateStatus(lookup(t, "deployments"), d, old))
	if d.Labels["patched"] != "" || d.Labels["app"] != "web" {
		t.Errorf("deployment status update changed the labels to %v", d.Labels)
	}
	if d.Annotations["deployment.kubernetes.io/revision"] != "2" {
		t.Errorf("deployment status update dropped the annotation: %v", d.Annotations)
	}
}
