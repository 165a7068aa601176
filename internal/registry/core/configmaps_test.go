package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func newConfigMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "default", ResourceVersion: "8"},
		Data:       map[string]string{"app.conf": "x=1"},
	}
}

func TestConfigMap(t *testing.T) {
	r := lookup(t, "configmaps")
	for name, c := range map[string]struct {
		mutate func(*corev1.ConfigMap)
		want   []string
	}{
		"valid":       {func(*corev1.ConfigMap) {}, nil},
		"bad key":     {func(cm *corev1.ConfigMap) { cm.Data["a/b"] = "" }, []string{"data[a/b]:FieldValueInvalid"}},
		"dot-dot key": {func(cm *corev1.ConfigMap) { cm.BinaryData = map[string][]byte{"..x": nil} }, []string{"binaryData[..x]:FieldValueInvalid"}},
		"dup key":     {func(cm *corev1.ConfigMap) { cm.BinaryData = map[string][]byte{"app.conf": nil} }, []string{"data[app.conf]:FieldValueInvalid"}},
		"too large":   {func(cm *corev1.ConfigMap) { cm.Data["big"] = strings.Repeat("x", corev1.MaxSecretSize) }, []string{"data:FieldValueTooLong"}},
		"bad name":    {func(cm *corev1.ConfigMap) { cm.Name = "-cfg" }, []string{"metadata.name:FieldValueInvalid"}},
	} {
		t.Run(name, func(t *testing.T) {
			cm := newConfigMap()
			c.mutate(cm)
			expectErrors(t, create(r, cm), c.want...)
		})
	}

	old := newConfigMap()
	old.Immutable = new(true)
	cm := old.DeepCopy()
	cm.Data["app.conf"] = "x=2"
	cm.Immutable = new(false)
	expectErrors(t, update(r, cm, old), "data:FieldValueForbidden", "immutable:FieldValueForbidden")
	cm = old.DeepCopy()
	cm.Labels = map[string]string{"a": "b"}
	expectValid(t, update(r, cm, old))

	expectFields(t, r, old, fields.Set{"metadata.name": "cfg", "metadata.namespace": "default"})
}

func newSecret() *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "default", ResourceVersion: "9"},
		Data:       map[string][]byte{"user": []byte("admin")},
		StringData: map[string]string{"password": "s3cret", "user": "root"},
	}
}

func TestSecretDefaults(t *testing.T) {
	s := newSecret()
	expectValid(t, create(lookup(t, "secrets"), s))
	if s.Type != corev1.SecretTypeOpaque || s.StringData != nil ||
		string(s.Data["password"]) != "s3cret" || string(s.Data["user"]) != "root" {
		t.Errorf("secret after create: type %s data %q stringData %v", s.Type, s.Data, s.StringData)
	}
	expectFields(t, lookup(t, "secrets"), s, fields.Set{"metadata.name": "creds", "metadata.namespace": "default", "type": "Opaque"})
}

func TestSecretValidation(t *testing.T) {
	r := lookup(t, "secrets")
	for name, c := range map[string]struct {
		mutate func(*corev1.Secret)
		want   []string
	}{
		"bad key":     {func(s *corev1.Secret) { s.Data["a b"] = nil }, []string{"data[a b]:FieldValueInvalid"}},
		"tls missing": {func(s *corev1.Secret) { s.Type = corev1.SecretTypeTLS }, []string{"data[tls.crt]:FieldValueRequired", "data[tls.key]:FieldValueRequired"}},
		"dockerconfig": {func(s *corev1.Secret) {
			s.Type = corev1.SecretTypeDockerConfigJson
			s.Data[".dockerconfigjson"] = []byte("{")
		}, []string{"data[.dockerconfigjson]:FieldValueInvalid"}},
		"sa token": {func(s *corev1.Secret) { s.Type = corev1.SecretTypeServiceAccountToken }, []string{"metadata.annotations[kubernetes.io/service-account.name]:FieldValueRequired"}},
		"basic auth ok": {func(s *corev1.Secret) {
			s.Type = corev1.SecretTypeBasicAuth
			s.Data = map[string][]byte{"username": nil}
		}, nil},
		"too large": {func(s *corev1.Secret) { s.Data["big"] = make([]byte, corev1.MaxSecretSize) }, []string{"data:FieldValueTooLong"}},
	} {
		t.Run(name, func(t *testing.T) {
			s := newSecret()
			c.mutate(s)
			expectErrors(t, create(r, s), c.want...)
		})
	}
}

func TestSecretUpdate(t *testing.T) {
	r := lookup(t, "secrets")
	old := newSecret()
	expectValid(t, create(r, old))

	s := old.DeepCopy()
	s.Type = corev1.SecretTypeBasicAuth
	s.Data = map[string][]byte{"username": []byte("u")}
	expectErrors(t, update(r, s, old), "type:FieldValueInvalid")

	old.Immutable = new(true)
	s = old.DeepCopy()
	s.StringData = map[string]string{"password": "changed"}
	expectErrors(t, update(r, s, old), "data:FieldValueForbidden")
}
