package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const crontabCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: CronTabSpec is what the user wants.
            required: [cronSpec, image]
            properties:
              cronSpec:
                type: string
                description: The schedule, in cron format.
                pattern: '^(\S+\s+){4}\S+$'
              image:
                type: string
                description: The container image to run.
              replicas:
                type: integer
                minimum: 1
                maximum: 10
                default: 1
          status:
            type: object
            properties:
              replicas: {type: integer}
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

// TestKubectlCustomResources drives a CRD's whole life with real kubectl
// against `setpoint up`: create, established, get with printer columns,
// explain, validation errors, defaulting and pruning, scale, another
// version, and deletion that takes the objects along.
func TestKubectlCustomResources(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1)
	s := c.server
	s.kubectl(t, crontabCRD, "apply", "-f", "-")
	s.kubectl(t, "", "wait", "--for=condition=Established", "--timeout=10s", "crd/crontabs.stable.example.com")
	if out := s.kubectl(t, "", "get", "crd", "crontabs.stable.example.com", "-o", "jsonpath={.status.conditions[?(@.type==\"NamesAccepted\")].status}"); out != "True" {
		t.Errorf("NamesAccepted = %q", out)
	}
	if out := s.kubectl(t, "", "api-resources", "--api-group=stable.example.com"); !strings.Contains(out, "crontabs") || !strings.Contains(out, "ct") {
		t.Errorf("api-resources: %s", out)
	}

	// Create: defaults applied, unknown fields reported.
	_, errOut, err := s.kubectlErr(t, `apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: nightly}
spec: {cronSpec: "0 3 * * *", image: backup:1, colour: blue}
`, "apply", "-f", "-")
	if err == nil || !strings.Contains(errOut, `unknown field "spec.colour"`) {
		t.Errorf("strict unknown field: err=%v stderr=%s", err, errOut)
	}
	s.kubectl(t, `apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: nightly}
spec: {cronSpec: "0 3 * * *", image: backup:1}
`, "apply", "-f", "-")
	if out := s.kubectl(t, "", "get", "ct", "nightly", "-o", "jsonpath={.spec.replicas}"); out != "1" {
		t.Errorf("defaulted replicas = %q", out)
	}
	out := s.kubectl(t, "", "get", "crontabs")
	if r := rows(out); len(r) != 1 || r[0][0] != "nightly" || r[0][1] != "0" || r[0][6] != "1" ||
		!strings.HasPrefix(strings.Fields(strings.Split(out, "\n")[0])[1], "SPEC") {
		t.Errorf("get crontabs:\n%s", out)
	}

	// Bad input: 422 with the field path.
	for _, c := range []struct{ name, spec, want string }{
		{"wrong-type", `{cronSpec: "0 3 * * *", image: x, replicas: many}`, "spec.replicas"},
		{"missing", `{cronSpec: "0 3 * * *"}`, "spec.image: Required value"},
		{"range", `{cronSpec: "0 3 * * *", image: x, replicas: 11}`, "spec.replicas: Invalid value: 11"},
		{"pattern", `{cronSpec: "soon", image: x}`, "spec.cronSpec: Invalid value"},
	} {
		_, errOut, err := s.kubectlErr(t, "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: "+c.name+"}\nspec: "+c.spec+"\n",
			"create", "-f", "-")
		if err == nil || !strings.Contains(errOut, "is invalid") || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: err=%v stderr=%s", c.name, err, errOut)
		}
	}

	// explain reads the published schema.
	if out := s.kubectl(t, "", "explain", "crontabs.spec"); !strings.Contains(out, "The schedule, in cron format.") ||
		!strings.Contains(out, "image") {
		t.Errorf("explain:\n%s", out)
	}

	// Scale, status, and the object at another version.
	s.kubectl(t, "", "scale", "crontab", "nightly", "--replicas=3")
	if out := s.kubectl(t, "", "get", "crontab", "nightly", "-o", "jsonpath={.spec.replicas}"); out != "3" {
		t.Errorf("replicas after scale = %q", out)
	}
	s.kubectl(t, "", "patch", "crontab", "nightly", "--subresource=status", "--type=merge", "-p", `{"status":{"replicas":3}}`)
	if out := s.kubectl(t, "", "get", "crontabs.v1beta1.stable.example.com", "nightly", "-o", "jsonpath={.apiVersion} {.status.replicas}"); out != "stable.example.com/v1beta1 3" {
		t.Errorf("v1beta1 view = %q", out)
	}
	s.kubectl(t, "", "label", "crontab", "nightly", "tier=ops")
	if out := s.kubectl(t, "", "get", "crontabs", "-l", "tier=ops", "-o", "name"); strings.TrimSpace(out) != "crontab.stable.example.com/nightly" {
		t.Errorf("label selector: %q", out)
	}

	// Deleting the CRD takes its objects along and stops serving it.
	s.kubectl(t, "", "delete", "crd", "crontabs.stable.example.com", "--timeout=30s")
	eventually(t, 20*time.Second, "crontabs not served once the CRD is deleted", func() string {
		_, errOut, err := s.kubectlErr(t, "", "get", "crontabs")
		// kubectl says one or the other, depending on whether its
		// discovery cache still knows the resource.
		if err != nil && (strings.Contains(errOut, `the server doesn't have a resource type "crontabs"`) ||
			strings.Contains(errOut, "the server could not find the requested resource")) {
			return ""
		}
		return fmt.Sprintf("still served: %v %s", err, errOut)
	})
	// A new CRD of the same name starts empty.
	s.kubectl(t, crontabCRD, "apply", "-f", "-")
	s.kubectl(t, "", "wait", "--for=condition=Established", "--timeout=10s", "crd/crontabs.stable.example.com")
	if out, errOut, _ := s.kubectlErr(t, "", "get", "crontabs", "-A"); strings.Contains(out, "nightly") {
		t.Errorf("objects survived their CRD: %s %s", out, errOut)
	}
}
