package plugins

import (
	"slices"
	"testing"
)

// TestDefaultChain checks the chain setpoint runs by default, in
// kube-apiserver's order.
func TestDefaultChain(t *testing.T) {
	want := []string{"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "PodSecurity", "Priority", "DefaultTolerationSeconds",
		"DefaultStorageClass", "StorageObjectInUseProtection", "RuntimeClass", "MutatingAdmissionPolicy", "MutatingAdmissionWebhook",
		"ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook", "ResourceQuota"}
	if got := Default().Names(); !slices.Equal(got, want) {
		t.Errorf("default chain\n got %v\nwant %v", got, want)
	}
	c, err := New(Options{Disable: []string{"ServiceAccount", "LimitRanger"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Names(); slices.Contains(got, "ServiceAccount") || slices.Contains(got, "LimitRanger") || len(got) != len(want)-2 {
		t.Errorf("chain without ServiceAccount and LimitRanger: %v", got)
	}
}

// TestRefusedFlags: plugins setpoint does not implement cannot be enabled,
// those the kinds run cannot be disabled; both may be named otherwise.
func TestRefusedFlags(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Enable: []string{"AlwaysPullImages"}}, `enable-admission-plugins plugin "AlwaysPullImages" is not implemented by setpoint`},
		{Options{Disable: []string{"DefaultIngressClass"}}, `disable-admission-plugins plugin "DefaultIngressClass" cannot be disabled: setpoint runs it as the admission of its kind`},
		{Options{Enable: []string{"Nope"}}, `enable-admission-plugins plugin "Nope" is unknown`},
	} {
		if _, err := New(tc.o); err == nil || err.Error() != tc.want {
			t.Errorf("New(%+v) = %v, want %q", tc.o, err, tc.want)
		}
	}
	if _, err := New(Options{Enable: []string{"CertificateApproval"}, Disable: []string{"MutatingAdmissionWebhook", "AlwaysPullImages"}}); err != nil {
		t.Errorf("enabling a kind's plugin or disabling an absent one: %v", err)
	}
}
