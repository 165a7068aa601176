package conformance

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/testenv"
)

// TestKubectlLabelAnnotate: kubectl label and annotate add, refuse to
// overwrite without --overwrite, overwrite with it, remove with key-, on
// one object, with -l on many, and with --all.
func TestKubectlLabelAnnotate(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	for _, n := range []string{"a", "b", "c"} {
		kubectl(t, env, "", "create", "configmap", n)
	}
	meta := func(t *testing.T, name string) (map[string]string, map[string]string) {
		t.Helper()
		var cm corev1.ConfigMap
		krJSON(t, env, &cm, "get", "configmap", name, "-o", "json")
		return cm.Labels, cm.Annotations
	}
	expect := func(t *testing.T, out, want string) {
		t.Helper()
		if out != want {
			t.Errorf("output %q, want %q", out, want)
		}
	}

	t.Run("label", func(t *testing.T) {
		expect(t, kubectl(t, env, "", "label", "configmap", "a", "color=red", "size=s"), "configmap/a labeled\n")
		if l, _ := meta(t, "a"); !reflect.DeepEqual(l, map[string]string{"color": "red", "size": "s"}) {
			t.Errorf("labels %v", l)
		}
		r := krFails(t, env, "", "label", "configmap", "a", "color=blue")
		expect(t, r.Stderr, "error: 'color' already has a value (red), and --overwrite is false\n")
		expect(t, kubectl(t, env, "", "label", "configmap", "a", "color=blue", "--overwrite"), "configmap/a labeled\n")
		expect(t, kubectl(t, env, "", "label", "configmap", "a", "size-"), "configmap/a unlabeled\n")
		if l, _ := meta(t, "a"); !reflect.DeepEqual(l, map[string]string{"color": "blue"}) {
			t.Errorf("labels after overwrite and removal %v", l)
		}
		expect(t, kubectl(t, env, "", "label", "configmap", "a", "size-"), "label \"size\" not found.\nconfigmap/a not labeled\n")
		// Invalid label values are refused by the server's validation.
		r = krFails(t, env, "", "label", "configmap", "a", "bad=-x-")
		if l, _ := meta(t, "a"); l["bad"] != "" {
			t.Errorf("invalid label written: %v (%s)", l, r.Stderr)
		}

		// Many objects: two by name, then -l, then --all.
		kubectl(t, env, "", "label", "configmap", "b", "c", "group=g")
		expect(t, kubectl(t, env, "", "label", "configmap", "-l", "group=g", "tier=x"), "configmap/b labeled\nconfigmap/c labeled\n")
		for _, n := range []string{"b", "c"} {
			if l, _ := meta(t, n); !reflect.DeepEqual(l, map[string]string{"group": "g", "tier": "x"}) {
				t.Errorf("%s labels %v", n, l)
			}
		}
		if l, _ := meta(t, "a"); l["tier"] != "" {
			t.Errorf("-l group=g labeled a too: %v", l)
		}
		expect(t, kubectl(t, env, "", "label", "configmap", "-l", "group=g", "tier-"), "configmap/b unlabeled\nconfigmap/c unlabeled\n")
		expect(t, kubectl(t, env, "", "label", "configmap", "--all", "all=yes"), "configmap/a labeled\nconfigmap/b labeled\nconfigmap/c labeled\n")
		if got := krNames(kubectl(t, env, "", "get", "configmaps", "-l", "all=yes")); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
			t.Errorf("get -l all=yes = %v", got)
		}
		// --resource-version makes the write conditional.
		r = krFails(t, env, "", "label", "configmap", "a", "stale=1", "--resource-version=1")
		if !strings.Contains(r.Stderr, "Conflict") {
			t.Errorf("label with a stale --resource-version: %s", r.Stderr)
		}
	})

	t.Run("annotate", func(t *testing.T) {
		expect(t, kubectl(t, env, "", "annotate", "configmap", "a", "note=hello world", "owner=me"), "configmap/a annotated\n")
		if _, a := meta(t, "a"); !reflect.DeepEqual(a, map[string]string{"note": "hello world", "owner": "me"}) {
			t.Errorf("annotations %v", a)
		}
		r := krFails(t, env, "", "annotate", "configmap", "a", "note=bye")
		expect(t, r.Stderr, "error: --overwrite is false but found the following declared annotation(s): 'note' already has a value (hello world)\n")
		expect(t, kubectl(t, env, "", "annotate", "configmap", "a", "note=bye", "--overwrite"), "configmap/a annotated\n")
		expect(t, kubectl(t, env, "", "annotate", "configmap", "a", "owner-"), "configmap/a annotated\n")
		if _, a := meta(t, "a"); !reflect.DeepEqual(a, map[string]string{"note": "bye"}) {
			t.Errorf("annotations after overwrite and removal %v", a)
		}
		expect(t, kubectl(t, env, "", "annotate", "configmap", "-l", "group=g", "batch=1"), "configmap/b annotated\nconfigmap/c annotated\n")
		for n, want := range map[string]map[string]string{"a": {"note": "bye"}, "b": {"batch": "1"}, "c": {"batch": "1"}} {
			if _, a := meta(t, n); !reflect.DeepEqual(a, want) {
				t.Errorf("%s annotations %v, want %v", n, a, want)
			}
		}
		expect(t, kubectl(t, env, "", "annotate", "configmap", "--all", "batch-"), "configmap/a annotated\nconfigmap/b annotated\nconfigmap/c annotated\n")
		for _, n := range []string{"b", "c"} {
			if _, a := meta(t, n); len(a) != 0 {
				t.Errorf("%s annotations after removal %v", n, a)
			}
		}
	})
}
