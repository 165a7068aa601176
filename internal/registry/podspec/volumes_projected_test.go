package podspec

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestValidateProjected: each rule of a projected volume gives the error
// kube-apiserver v1.37.2 gives (internal/registry/core's reference cases
// hold its answers to whole pods).
func TestValidateProjected(t *testing.T) {
	cert := func(f func(*corev1.PodCertificateProjection)) []corev1.VolumeProjection {
		c := &corev1.PodCertificateProjection{SignerName: "example.com/foo", KeyType: "ED25519", KeyPath: "key.pem"}
		f(c)
		return []corev1.VolumeProjection{{PodCertificate: c}}
	}
	const v = "spec.volumes[0].projected"
	for name, tc := range map[string]struct {
		pv   corev1.ProjectedVolumeSource
		want []string
	}{
		"certificate expiry above 91 days": {
			corev1.ProjectedVolumeSource{Sources: cert(func(c *corev1.PodCertificateProjection) { c.MaxExpirationSeconds = new(int32(7862401)) })},
			[]string{v + ".sources[0].podCertificate.maxExpirationSeconds: Invalid value: 7862401: if provided, maxExpirationSeconds must be <= 7862400"},
		},
		"certificate expiry below 1 h": {
			corev1.ProjectedVolumeSource{Sources: cert(func(c *corev1.PodCertificateProjection) { c.MaxExpirationSeconds = new(int32(3599)) })},
			[]string{v + ".sources[0].podCertificate.maxExpirationSeconds: Invalid value: 3599: if provided, maxExpirationSeconds must be >= 3600"},
		},
		"kubernetes.io signer above 24 h": {
			corev1.ProjectedVolumeSource{Sources: cert(func(c *corev1.PodCertificateProjection) {
				c.SignerName, c.MaxExpirationSeconds = "sub.kubernetes.io/x", new(int32(86401))
			})},
			[]string{v + ".sources[0].podCertificate.maxExpirationSeconds: Invalid value: 86401: if provided, maxExpirationSeconds must be <= 86400"},
		},
		"certificate key type and no path": {
			corev1.ProjectedVolumeSource{Sources: cert(func(c *corev1.PodCertificateProjection) { c.KeyType, c.KeyPath = "DSA", "" })},
			[]string{
				v + `.sources[0].podCertificate.keyType: Unsupported value: "DSA": supported values: "RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"`,
				v + ".sources[0].podCertificate: Required value: specify at least one of credentialBundlePath, keyPath, and certificateChainPath",
			},
		},
		"paths: absolute, backstep, leading dots, duplicate": {
			corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "s"},
					Items: []corev1.KeyToPath{{Key: "a", Path: "/a"}, {Key: "b", Path: "x/../b"}, {Key: "c", Path: "..c"}, {Key: "d", Path: "d"}}}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"},
					Items: []corev1.KeyToPath{{Key: "d", Path: "d"}}}},
			}},
			[]string{
				v + `.sources[0].secret.items[0].path: Invalid value: "/a": must be a relative path`,
				v + `.sources[0].secret.items[1].path: Invalid value: "x/../b": must not contain '..'`,
				v + `.sources[0].secret.items[2].path: Invalid value: "..c": must not start with '..'`,
				v + `: Invalid value: "cm": conflicting duplicate paths`,
			},
		},
		"modes": {
			corev1.ProjectedVolumeSource{DefaultMode: new(int32(0o1000)), Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "s"},
					Items: []corev1.KeyToPath{{Key: "a", Path: "a", Mode: new(int32(-1))}}}},
			}},
			[]string{
				v + ".defaultMode: Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive",
				v + ".sources[0].secret.items[0].mode: Invalid value: -1: must be a number between 0 and 0777 (octal), both inclusive",
			},
		},
		"token expiry and path": {
			corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: new(int64(599))}},
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: new(int64(1<<32 + 1)), Path: "../t"}},
			}},
			[]string{
				v + ".sources[0].serviceAccountToken.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes",
				v + ".path: Required value",
				v + ".sources[1].serviceAccountToken.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds",
				v + `.path: Invalid value: "../t": must not contain '..'`,
			},
		},
		"trust bundle by name and by signer": {
			corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: new("a"), SignerName: new("example.com/b"), Path: "p"}},
				{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: new("b"), LabelSelector: &metav1.LabelSelector{}, Path: "q"}},
				{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Path: "p"}},
			}},
			[]string{
				v + `.sources[0].clusterTrustBundle: Invalid value: {"Name":"a","SignerName":"example.com/b","LabelSelector":null,"Optional":null,"Path":"p","User":null}: only one of name and signerName may be used`,
				v + ".sources[1].clusterTrustBundle.labelSelector: Invalid value: {}: labelSelector must be unset if name is specified",
				v + ".sources[2].clusterTrustBundle: Required value: either name or signerName must be specified",
				v + `: Invalid value: "p": conflicting duplicate paths`,
			},
		},
		"downward API file": {
			corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "n", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.host"}},
				{Path: "c", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "c", Resource: "limits.cpu", Divisor: resource.MustParse("3")}},
			}}}}},
			[]string{
				v + `.sources[0].downwardAPI.fieldRef.fieldPath: Unsupported value: "spec.nodeName": supported values: "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"`,
				v + `.sources[0].downwardAPI.resourceFieldRef.divisor: Invalid value: "limits.cpu": only divisor's values 1m and 1 are supported with the cpu resource`,
			},
		},
		"two kinds in one source": {
			corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{
				Secret:    &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}},
				ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}},
			}}},
			[]string{v + ".sources[0]: Forbidden: may not specify more than 1 volume type per source"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			errs := validateProjected(&tc.pv, field.NewPath("spec", "volumes").Index(0).Child("projected"))
			got := make([]string, len(errs))
			for i, e := range errs {
				got[i] = e.Error()
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("errors\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestValidateVolumesSkipsInvalid: a volume with errors is not one a
// mount may name, as in kube-apiserver; a valid one is.
func TestValidateVolumesSkipsInvalid(t *testing.T) {
	vols := []corev1.Volume{
		{Name: "bad", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: new(int32(-1))}}},
		{Name: "good", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}},
	}
	names, errs := validateVolumes(vols, "", field.NewPath("spec", "volumes"))
	if len(errs) != 1 || names.Has("bad") || !names.Has("good") {
		t.Errorf("names %v, errors %v; want only good and one error", names.UnsortedList(), errs)
	}
}

// TestDropDisabledFields: the volume user fields are dropped on create
// and on an update of a spec without them, kept on an update of one with.
func TestDropDisabledFields(t *testing.T) {
	spec := func() *corev1.PodSpec {
		return &corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{
			Projected: &corev1.ProjectedVolumeSource{DefaultUser: new(int64(1)), Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t", User: new(int64(1))}},
			}},
		}}}}
	}
	s := spec()
	DropDisabledFields(s, nil)
	if p := s.Volumes[0].Projected; p.DefaultUser != nil || p.Sources[0].ServiceAccountToken.User != nil {
		t.Errorf("create kept user fields: %+v", p)
	}
	s = spec()
	DropDisabledFields(s, spec())
	if p := s.Volumes[0].Projected; p.DefaultUser == nil || p.Sources[0].ServiceAccountToken.User == nil {
		t.Errorf("update of a spec using them dropped user fields: %+v", p)
	}
}
