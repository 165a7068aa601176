package serviceaccount_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/admission/admissiontest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// TestServiceAccountAdmission runs the cases on one server (the plugin
// enabled), each in its own namespace.
func TestServiceAccountAdmission(t *testing.T) {
	s := admissiontest.Start(t, testserver.Options{EnableAdmissionPlugins: []string{"ServiceAccount"}})
	for _, tc := range []struct {
		ns  string
		run func(*testing.T, *nsServer)
	}{
		{"defaults", defaultsAndTokenVolume},
		{"automount", automount},
		{"missing", missingServiceAccount},
		{"mirror", mirrorPods},
		{"mountable", enforceMountableSecrets},
	} {
		t.Run(tc.ns, func(t *testing.T) {
			s.CreateNamespace(tc.ns)
			tc.run(t, &nsServer{Server: s, podsPath: "/api/v1/namespaces/" + tc.ns + "/pods", ns: tc.ns})
		})
	}
}

// nsServer is the server and the namespace of one case.
type nsServer struct {
	*admissiontest.Server
	podsPath, ns string
}

func createSA(s *nsServer, sa *corev1.ServiceAccount) {
	sa.APIVersion, sa.Kind = "v1", "ServiceAccount"
	s.MustDo(http.MethodPost, "/api/v1/namespaces/"+s.ns+"/serviceaccounts", sa, nil)
}

func pod(name string, mutate func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	if mutate != nil {
		mutate(p)
	}
	return p
}

func forbidden(name, msg string) admissiontest.Refusal {
	return admissiontest.Refusal{Code: 403, Reason: metav1.StatusReasonForbidden, Name: name, Kind: "pods",
		Message: `pods "` + name + `" is forbidden: ` + msg}
}

// wantTokenVolume is the projected volume kube-apiserver v1.37 adds, as
// the reference server answered it (its name aside).
const wantTokenVolume = `{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},` +
	`{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},` +
	`{"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}],"defaultMode":420}`

// A pod without a ServiceAccount gets "default", the token volume mounted
// read-only in every container and init container that mounts nothing at
// the path, and the ServiceAccount's image pull secrets.
func defaultsAndTokenVolume(t *testing.T, s *nsServer) {
	createSA(s, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull1"}, {Name: "pull2"}}})
	var got corev1.Pod
	s.MustDo(http.MethodPost, s.podsPath, pod("p", func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "busybox"}}
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "d", Image: "nginx",
			VolumeMounts: []corev1.VolumeMount{{Name: "x", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}})
		p.Spec.Volumes = []corev1.Volume{{Name: "x", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}), &got)
	if got.Spec.ServiceAccountName != "default" || got.Spec.DeprecatedServiceAccount != "default" {
		t.Errorf("serviceAccountName %q serviceAccount %q, want default", got.Spec.ServiceAccountName, got.Spec.DeprecatedServiceAccount)
	}
	if len(got.Spec.Volumes) != 2 {
		t.Fatalf("volumes %+v", got.Spec.Volumes)
	}
	v := got.Spec.Volumes[1]
	if !regexp.MustCompile(`^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$`).MatchString(v.Name) {
		t.Errorf("volume name %q", v.Name)
	}
	if raw, _ := json.Marshal(v.Projected); string(raw) != wantTokenVolume {
		t.Errorf("projected volume\n got %s\nwant %s", raw, wantTokenVolume)
	}
	want := corev1.VolumeMount{Name: v.Name, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}
	for _, c := range []corev1.Container{got.Spec.InitContainers[0], got.Spec.Containers[0]} {
		if len(c.VolumeMounts) != 1 || !reflect.DeepEqual(c.VolumeMounts[0], want) {
			t.Errorf("container %s mounts %+v, want %+v", c.Name, c.VolumeMounts, want)
		}
	}
	if m := got.Spec.Containers[1].VolumeMounts; len(m) != 1 || m[0].Name != "x" {
		t.Errorf("container d mounts %+v, want its own only", m)
	}
	if ps := got.Spec.ImagePullSecrets; len(ps) != 2 || ps[0].Name != "pull1" || ps[1].Name != "pull2" {
		t.Errorf("imagePullSecrets %+v", ps)
	}
}

// automountServiceAccountToken: the pod's choice wins over the
// ServiceAccount's; a pod's own pull secrets are kept.
func automount(t *testing.T, s *nsServer) {
	no, yes := false, true
	createSA(s, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nomount"}, AutomountServiceAccountToken: &no,
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull1"}}})
	var got corev1.Pod
	s.MustDo(http.MethodPost, s.podsPath, pod("off", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "nomount" }), &got)
	if len(got.Spec.Volumes) != 0 || len(got.Spec.Containers[0].VolumeMounts) != 0 {
		t.Errorf("token mounted despite the ServiceAccount: %+v", got.Spec.Volumes)
	}
	s.MustDo(http.MethodPost, s.podsPath, pod("on", func(p *corev1.Pod) {
		p.Spec.ServiceAccountName, p.Spec.AutomountServiceAccountToken = "nomount", &yes
		p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "mine"}}
	}), &got)
	if len(got.Spec.Volumes) != 1 || !strings.HasPrefix(got.Spec.Volumes[0].Name, "kube-api-access-") {
		t.Errorf("pod asking for the token got volumes %+v", got.Spec.Volumes)
	}
	if ps := got.Spec.ImagePullSecrets; len(ps) != 1 || ps[0].Name != "mine" {
		t.Errorf("imagePullSecrets %+v, want the pod's", ps)
	}
}

// A pod whose ServiceAccount does not exist is refused; for "default"
// after the retries kube's plugin makes, and admitted when the
// ServiceAccount appears during them.
func missingServiceAccount(t *testing.T, s *nsServer) {
	s.WantRefused(http.MethodPost, s.podsPath, pod("", func(p *corev1.Pod) { p.GenerateName = "g-"; p.Spec.ServiceAccountName = "nope" }),
		s.podsPath, forbidden("g-", `error looking up service account missing/nope: serviceaccount "nope" not found`))
	began := time.Now()
	s.WantRefused(http.MethodPost, s.podsPath, pod("p", nil), s.podsPath,
		forbidden("p", `error looking up service account missing/default: serviceaccount "default" not found`))
	if waited := time.Since(began); waited < 900*time.Millisecond {
		t.Errorf("missing default refused after %s, want the retries (>= 0.9s)", waited)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		createSA(s, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	}()
	s.MustDo(http.MethodPost, s.podsPath, pod("late", nil), nil)
}

// Mirror pods are left alone but may not use a ServiceAccount, secrets or
// a projected token.
func mirrorPods(t *testing.T, s *nsServer) {
	mirror := func(name string, f func(*corev1.Pod)) *corev1.Pod {
		return pod(name, func(p *corev1.Pod) {
			p.Annotations = map[string]string{"kubernetes.io/config.mirror": "x"}
			p.Spec.NodeName = "n"
			if f != nil {
				f(p)
			}
		})
	}
	s.WantRefused(http.MethodPost, s.podsPath, mirror("m1", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "default" }), s.podsPath,
		forbidden("m1", "a mirror pod may not reference service accounts"))
	s.WantRefused(http.MethodPost, s.podsPath, mirror("m2", func(p *corev1.Pod) {
		p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "a", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}}}
	}), s.podsPath, forbidden("m2", "a mirror pod may not reference secrets"))
	exp := int64(3600)
	s.WantRefused(http.MethodPost, s.podsPath, mirror("m3", func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t", ExpirationSeconds: &exp}}}}}}}
	}), s.podsPath, forbidden("m3", "a mirror pod may not use ServiceAccountToken volume projections"))
	var got corev1.Pod
	s.MustDo(http.MethodPost, s.podsPath, mirror("ok", nil), &got)
	if got.Spec.ServiceAccountName != "" || len(got.Spec.Volumes) != 0 {
		t.Errorf("mirror pod changed: serviceAccountName %q volumes %+v", got.Spec.ServiceAccountName, got.Spec.Volumes)
	}
}

// A ServiceAccount annotated kubernetes.io/enforce-mountable-secrets
// limits the secrets its pods reference, on create and when ephemeral
// containers are added.
func enforceMountableSecrets(t *testing.T, s *nsServer) {
	createSA(s, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "strict",
		Annotations: map[string]string{"kubernetes.io/enforce-mountable-secrets": "true"}},
		Secrets: []corev1.ObjectReference{{Name: "ok"}}, ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}})
	strict := func(name string, f func(*corev1.Pod)) *corev1.Pod {
		return pod(name, func(p *corev1.Pod) { p.Spec.ServiceAccountName = "strict"; f(p) })
	}
	secretEnv := []corev1.EnvVar{{Name: "E", ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "bad"}, Key: "k"}}}}
	const tail = ` is not allowed because service account strict does not reference that secret`
	s.WantRefused(http.MethodPost, s.podsPath, strict("s1", func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "bad"}}}}
	}), s.podsPath, forbidden("s1", `volume with secret.secretName="bad"`+tail))
	s.WantRefused(http.MethodPost, s.podsPath, strict("s2", func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "x", Env: secretEnv}}
	}), s.podsPath, forbidden("s2", `init container i with envVar E referencing secret.secretName="bad"`+tail))
	s.WantRefused(http.MethodPost, s.podsPath, strict("s3", func(p *corev1.Pod) {
		p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "bad"}}}}
	}), s.podsPath, forbidden("s3", `container c with envFrom referencing secret.secretName="bad"`+tail))
	s.WantRefused(http.MethodPost, s.podsPath, strict("s4", func(p *corev1.Pod) {
		p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "other"}}
	}), s.podsPath, forbidden("s4", `imagePullSecrets[0].name="other" is not allowed because service account strict does not reference that imagePullSecret`))

	var p corev1.Pod
	s.MustDo(http.MethodPost, s.podsPath, strict("e1", func(*corev1.Pod) {}), &p)
	p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "dbg", Image: "x", Env: secretEnv}}}
	s.WantRefused(http.MethodPut, s.podsPath+"/e1/ephemeralcontainers", &p, s.podsPath, admissiontest.Refusal{Code: 500,
		Message: `ephemeral container dbg with envVar E referencing secret.secretName="bad"` + tail})
}
