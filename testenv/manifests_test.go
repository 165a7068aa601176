package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadWebhookManifests: a directory gives the webhook configurations
// of its manifest files and skips other kinds and files; a typo in a
// configuration and a missing path are errors.
func TestReadWebhookManifests(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"a.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\n# a comment only\n---\n" +
			"apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: v1}\nwebhooks: []\n",
		"b.json":    `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingWebhookConfiguration","metadata":{"name":"m1"}}`,
		"notes.txt": "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: ignored}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, v, err := readWebhookManifests([]string{dir, "testdata/webhook/manifests.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || m[0].Name != "m1" || m[1].Name != "mutating-webhook-configuration" || len(v) != 1 || v[0].Name != "v1" {
		t.Fatalf("read %d mutating, %d validating: %v %v", len(m), len(v), m, v)
	}
	if p := m[1].Webhooks[0].ClientConfig.Service.Path; p == nil || *p != "/mutate--v1-configmap" {
		t.Fatalf("service path %v", p)
	}

	typo := filepath.Join(t.TempDir(), "typo.yaml")
	if err := os.WriteFile(typo, []byte("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: v}\nwebhook: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readWebhookManifests([]string{typo}); err == nil || !strings.Contains(err.Error(), "typo.yaml, document 1") {
		t.Fatalf("typo: %v", err)
	}
	if _, _, err := readWebhookManifests([]string{filepath.Join(dir, "missing")}); err == nil {
		t.Fatal("a missing path was read")
	}
}
