package core_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// TestVolumeAdmission checks kube-apiserver's admissions of claims and
// volumes on a real server: the protection finalizers on create, the
// newest default class for a claim without one, and the 403s of
// PersistentVolumeClaimResize (claim not bound; class missing or not
// allowing expansion), each leaving the stored claim unchanged.
func TestVolumeAdmission(t *testing.T) {
	c := reftest.Start(t, testserver.Options{})
	const classes = "/apis/storage.k8s.io/v1/storageclasses"
	c.Must(t, post, classes, `{"metadata":{"name":"old","annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"x"}`, http.StatusCreated, nil)
	c.Must(t, post, classes, `{"metadata":{"name":"fixed"},"provisioner":"x"}`, http.StatusCreated, nil)
	c.Must(t, post, classes, `{"metadata":{"name":"grow"},"provisioner":"x","allowVolumeExpansion":true}`, http.StatusCreated, nil)

	var pv corev1.PersistentVolume
	c.Must(t, post, "/api/v1/persistentvolumes", `{"metadata":{"name":"pv1"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/tmp/pv1"}}}`, http.StatusCreated, &pv)
	if !slices.Equal(pv.Finalizers, []string{"kubernetes.io/pv-protection"}) {
		t.Errorf("pv finalizers %v", pv.Finalizers)
	}

	const pvcs = "/api/v1/namespaces/default/persistentvolumeclaims"
	claim := func(name, class string) corev1.PersistentVolumeClaim {
		t.Helper()
		body := `{"metadata":{"name":"` + name + `"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}`
		if class != "" {
			body += `,"storageClassName":"` + class + `"`
		}
		var out corev1.PersistentVolumeClaim
		c.Must(t, post, pvcs, body+`}}`, http.StatusCreated, &out)
		return out
	}
	got := claim("defaulted", "")
	if got.Spec.StorageClassName == nil || *got.Spec.StorageClassName != "old" {
		t.Errorf("class %v, want old", got.Spec.StorageClassName)
	}
	if !slices.Equal(got.Finalizers, []string{"kubernetes.io/pvc-protection"}) {
		t.Errorf("pvc finalizers %v", got.Finalizers)
	}
	// Two defaults: the newest wins.
	c.Must(t, post, classes, `{"metadata":{"name":"new","annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"x"}`, http.StatusCreated, nil)
	if got := claim("newest", ""); *got.Spec.StorageClassName != "new" {
		t.Errorf("class %q, want new", *got.Spec.StorageClassName)
	}

	refuse := func(name, msg string) {
		t.Helper()
		var was corev1.PersistentVolumeClaim
		c.Must(t, get, pvcs+"/"+name, "", http.StatusOK, &was)
		code, body := c.Do(t, patch, pvcs+"/"+name, `{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`)
		var st metav1.Status
		_ = json.Unmarshal(body, &st)
		if code != http.StatusForbidden || st.Reason != metav1.StatusReasonForbidden || st.Message != `persistentvolumeclaims "`+name+`" is forbidden: `+msg ||
			st.Details == nil || st.Details.Name != name || st.Details.Kind != "persistentvolumeclaims" {
			t.Errorf("%s: %d %s", name, code, body)
		}
		var now corev1.PersistentVolumeClaim
		c.Must(t, get, pvcs+"/"+name, "", http.StatusOK, &now)
		if now.ResourceVersion != was.ResourceVersion || !now.Spec.Resources.Requests.Storage().Equal(*was.Spec.Resources.Requests.Storage()) {
			t.Errorf("%s changed: %v", name, now.Spec.Resources.Requests)
		}
	}
	claim("pending", "grow")
	refuse("pending", "Only bound persistent volume claims can be expanded")
	for _, name := range []string{"fixed", "grow", "missing"} {
		claim(name, name)
		setBound(t, c, pvcs+"/"+name)
	}
	refuse("fixed", "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize")
	refuse("missing", "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize")
	var grown corev1.PersistentVolumeClaim
	c.Must(t, patch, pvcs+"/grow", `{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`, http.StatusOK, &grown)
	if q := grown.Spec.Resources.Requests.Storage(); q.String() != "2Gi" {
		t.Errorf("grown to %s", q)
	}
}

// setBound writes phase Bound through the status subresource.
func setBound(t *testing.T, c *reftest.Server, path string) {
	t.Helper()
	var cur corev1.PersistentVolumeClaim
	c.Must(t, get, path, "", http.StatusOK, &cur)
	cur.Status.Phase = corev1.ClaimBound
	b, _ := json.Marshal(&cur)
	c.Must(t, http.MethodPut, path+"/status", string(b), http.StatusOK, nil)
}
