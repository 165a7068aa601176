package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/version"

	"github.com/setpoint-dev/setpoint/internal/discovery"
	"github.com/setpoint-dev/setpoint/internal/discovery/discoverytest"
	"github.com/setpoint-dev/setpoint/internal/openapi"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

const kubectlPath = "/usr/bin/kubectl"

// requestLog records the method, URI and Accept header of every request
// the test server saw.
type requestLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *requestLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.seen = append(l.seen, r.Method+" "+r.URL.RequestURI()+" accept="+r.Header.Get("Accept"))
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (l *requestLog) matching(prefix string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.seen {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// kubectlEnv is a TLS test server that serves only discovery, OpenAPI and
// /version, with a kubeconfig pointing at it.
type kubectlEnv struct {
	t          *testing.T
	kubeconfig string
	cacheDir   string
	log        *requestLog
}

func newKubectlEnv(t *testing.T) *kubectlEnv {
	t.Helper()
	return newKubectlEnvWith(t, discoverytest.Resources)
}

// newKubectlEnvWith serves the discovery and OpenAPI documents of the
// resources that resources returns (called once for each).
func newKubectlEnvWith(t *testing.T, resources func() []*registry.Resource) *kubectlEnv {
	t.Helper()
	if _, err := os.Stat(kubectlPath); err != nil {
		t.Fatalf("this test runs the real kubectl 1.32, expected at %s: %v", kubectlPath, err)
	}
	disco, err := discovery.New(resources())
	if err != nil {
		t.Fatal(err)
	}
	oapi, err := openapi.New(resources(), openapi.Options{Version: "v1.37.0-setpoint"})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	disco.Register(mux)
	oapi.Register(mux)
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(version.Info{
			Major: "1", Minor: "37", GitVersion: "v1.37.0-setpoint", Platform: "linux/amd64",
		})
	})
	env := &kubectlEnv{t: t, log: &requestLog{}}
	srv := httptest.NewTLSServer(env.log.wrap(mux))
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	env.cacheDir = filepath.Join(dir, "cache")
	env.kubeconfig = filepath.Join(dir, "kubeconfig")
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: test
  user:
    token: test-token
contexts:
- name: test
  context: {cluster: test, user: test, namespace: default}
current-context: test
`, srv.URL)
	if err := os.WriteFile(env.kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return env
}

// run runs kubectl with args and returns its stdout; it fails the test on
// a non-zero exit.
func (e *kubectlEnv) run(args ...string) string {
	e.t.Helper()
	out, errOut, err := e.tryRun(args...)
	if err != nil {
		e.t.Fatalf("kubectl %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func (e *kubectlEnv) tryRun(args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	full := append([]string{"--kubeconfig", e.kubeconfig, "--cache-dir", e.cacheDir}, args...)
	cmd := exec.CommandContext(ctx, kubectlPath, full...)
	cmd.Env = append(os.Environ(), "HOME="+e.t.TempDir(), "KUBECONFIG="+e.kubeconfig)
	var o, eo bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &eo
	err = cmd.Run()
	return o.String(), eo.String(), err
}

func requireContains(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("%s: output lacks %q:\n%s", what, want, out)
		}
	}
}

func TestKubectlAPIResourcesAndVersions(t *testing.T) {
	env := newKubectlEnv(t)

	out := env.run("api-versions")
	requireContains(t, "api-versions", out, "v1\n", "apps/v1\n", "coordination.k8s.io/v1\n")

	out = env.run("api-resources")
	requireContains(t, "api-resources", out,
		"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND")
	for _, row := range [][]string{
		{"pods", "po", "v1", "true", "Pod"},
		{"configmaps", "cm", "v1", "true", "ConfigMap"},
		{"nodes", "no", "v1", "false", "Node"},
		{"deployments", "deploy", "apps/v1", "true", "Deployment"},
		{"leases", "coordination.k8s.io/v1", "true", "Lease"},
	} {
		if !hasRow(out, row) {
			t.Errorf("api-resources lacks row %v:\n%s", row, out)
		}
	}

	out = env.run("api-resources", "--categories=all", "--no-headers", "-o", "name")
	if got := strings.Fields(out); strings.Join(got, ",") != "pods,deployments.apps" {
		t.Errorf("api-resources --categories=all = %v, want pods and deployments.apps", got)
	}

	out = env.run("api-resources", "--namespaced=false", "--no-headers", "-o", "name")
	if got := strings.Fields(out); strings.Join(got, ",") != "nodes" {
		t.Errorf("api-resources --namespaced=false = %v, want [nodes]", got)
	}

	// kubectl must have used the aggregated discovery, not walked every
	// group-version.
	if got := env.log.matching("GET /apis/apps/v1"); len(got) != 0 {
		t.Errorf("kubectl fell back to per-group-version discovery: %v", got)
	}
	for _, r := range env.log.matching("GET /apis ") {
		requireContains(t, "Accept of GET /apis", r, "g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
	}
}

// hasRow reports whether out has a line whose fields are exactly row.
func hasRow(out string, row []string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(line), " ") == strings.Join(row, " ") {
			return true
		}
	}
	return false
}

func TestKubectlExplain(t *testing.T) {
	env := newKubectlEnv(t)

	out := env.run("explain", "pods.spec.containers")
	requireContains(t, "explain pods.spec.containers", out,
		"KIND:       Pod", "VERSION:    v1",
		"FIELD: containers <[]Container>",
		"List of containers belonging to the pod.",
		"name\t<string> -required-",
		"ports\t<[]ContainerPort>",
		"resources\t<ResourceRequirements>")

	out = env.run("explain", "deployment.spec.strategy", "--recursive")
	requireContains(t, "explain deployment.spec.strategy --recursive", out,
		"GROUP:      apps", "KIND:       Deployment",
		"FIELD: strategy <DeploymentStrategy>",
		"rollingUpdate\t<RollingUpdateDeployment>",
		"maxSurge\t<IntOrString>",
		"maxUnavailable\t<IntOrString>",
		"type\t<string>")

	out = env.run("explain", "configmaps")
	requireContains(t, "explain configmaps", out,
		"KIND:       ConfigMap",
		"ConfigMap holds configuration data for pods to consume.",
		"data\t<map[string]string>",
		"metadata\t<ObjectMeta>",
		"binaryData\t<map[string]string>")

	out = env.run("explain", "deploy.spec.template.spec.containers.resources")
	requireContains(t, "explain ...containers.resources", out,
		"limits\t<map[string]Quantity>", "claims\t<[]ResourceClaim>")

	out = env.run("explain", "leases.spec", "--api-version=coordination.k8s.io/v1")
	requireContains(t, "explain leases.spec", out,
		"GROUP:      coordination.k8s.io", "KIND:       Lease",
		"holderIdentity\t<string>", "renewTime\t<string>")

	out = env.run("explain", "nodes.status.conditions")
	requireContains(t, "explain nodes.status.conditions", out,
		"FIELD: conditions <[]NodeCondition>", "lastHeartbeatTime\t<string>", "type\t<string> -required-")

	// The same through the Swagger 2.0 (protobuf) document.
	out = env.run("explain", "pods.spec.containers", "--output=plaintext-openapiv2")
	requireContains(t, "explain --output=plaintext-openapiv2", out,
		"KIND:     Pod", "RESOURCE: containers <[]Object>",
		"List of containers belonging to the pod.")
	if got := env.log.matching("GET /openapi/v2"); len(got) == 0 || !strings.Contains(got[0], "protobuf") {
		t.Errorf("kubectl did not fetch /openapi/v2 as protobuf: %v", got)
	}
}

// TestKubectlExplainCustomResource: kubectl explain finds a custom
// resource through discovery and shows its schema's field descriptions,
// from OpenAPI v3 and from the Swagger 2.0 protobuf document.
func TestKubectlExplainCustomResource(t *testing.T) {
	env := newKubectlEnvWith(t, func() []*registry.Resource {
		return []*registry.Resource{minimalCronTab(t)}
	})

	out := env.run("explain", "crontabs.spec", "--api-version=stable.example.com/v1")
	requireContains(t, "explain crontabs.spec", out,
		"GROUP:      stable.example.com", "KIND:       CronTab", "VERSION:    v1",
		"FIELD: spec <Object>",
		"The desired state of the cron job.",
		"cronSpec\t<string> -required-",
		"The cron schedule of the job, in cron format.",
		"replicas\t<integer>",
		"How many copies of the job run at once; at least 1.")

	out = env.run("explain", "crontab", "--api-version=stable.example.com/v1")
	requireContains(t, "explain crontab", out,
		"A CronTab runs a job on a schedule.",
		"metadata\t<ObjectMeta>", "spec\t<Object>", "status\t<Object>")

	out = env.run("explain", "crontabs.spec.replicas", "--api-version=stable.example.com/v1", "--output=plaintext-openapiv2")
	requireContains(t, "explain --output=plaintext-openapiv2", out,
		"KIND:     CronTab", "FIELD:    replicas <integer>",
		"How many copies of the job run at once; at least 1.")
}

// TestKubectlExplainCustomResourceMetadata: a custom resource's metadata
// property is a $ref to ObjectMeta with a description beside it (as
// package crdschema publishes it); kubectl explain of it shows that
// description (before ObjectMeta's own) only if OpenAPI v3 wraps a $ref with
// siblings in a one-element allOf (the conformance spec "works for CRD
// with validation schema" looks for it).
func TestKubectlExplainCustomResourceMetadata(t *testing.T) {
	env := newKubectlEnvWith(t, func() []*registry.Resource {
		r := minimalCronTab(t)
		meta := r.Schema.Properties["metadata"]
		r.Schema.Properties["metadata"] = *meta.WithDescription("Standard object's metadata of a CronTab.")
		return []*registry.Resource{r}
	})
	out := env.run("explain", "crontabs.metadata", "--api-version=stable.example.com/v1")
	requireContains(t, "explain crontabs.metadata", out,
		"FIELD: metadata <ObjectMeta>", "Standard object's metadata of a CronTab.",
		"creationTimestamp\t<string>")
}

// minimalCronTab is a custom resource with a small published schema.
func minimalCronTab(t *testing.T) *registry.Resource {
	r := cronTab(t, "v1", `{
  "type": "object",
  "description": "A CronTab runs a job on a schedule.",
  "properties": {
    "apiVersion": {"type": "string"},
    "kind": {"type": "string"},
    "metadata": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
    "spec": {
      "type": "object",
      "description": "The desired state of the cron job.",
      "required": ["cronSpec"],
      "properties": {
        "cronSpec": {"type": "string", "description": "The cron schedule of the job, in cron format."},
        "replicas": {"type": "integer", "minimum": 1, "description": "How many copies of the job run at once; at least 1."}
      }
    },
    "status": {"type": "object", "description": "The observed state.", "x-kubernetes-preserve-unknown-fields": true}
  }
}`)
	r.Status, r.Scale = nil, nil
	return r
}

// TestKubectlSendsStrictFieldValidation runs kubectl create and apply
// against a server without resource endpoints: the writes fail with 404,
// but the request kubectl sent shows whether it trusted the server to
// validate fields (fieldValidation=Strict) instead of validating itself.
func TestKubectlSendsStrictFieldValidation(t *testing.T) {
	env := newKubectlEnv(t)
	manifest := filepath.Join(t.TempDir(), "deployment.yaml")
	err := os.WriteFile(manifest, []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"create", "apply"} {
		_, stderr, err := env.tryRun(verb, "-f", manifest)
		if err == nil || !strings.Contains(stderr, "NotFound") {
			t.Fatalf("kubectl %s: err %v, stderr %s; want the 404 of the missing endpoint", verb, err, stderr)
		}
	}
	posts := env.log.matching("POST /apis/apps/v1/namespaces/default/deployments")
	if len(posts) != 2 {
		t.Fatalf("POSTs seen: %v", posts)
	}
	for _, p := range posts {
		requireContains(t, "kubectl write", p, "fieldValidation=Strict")
	}
	if got := env.log.matching("GET /openapi/v2"); len(got) != 0 {
		t.Errorf("kubectl fell back to OpenAPI v2: %v", got)
	}
}
