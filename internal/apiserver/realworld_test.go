package apiserver_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// readDocuments returns the YAML documents of a file (gzip-compressed when
// its name ends in .gz) as JSON objects; empty documents are skipped.
func readDocuments(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 1<<16)
	var out []map[string]any
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if doc != nil {
			out = append(out, doc)
		}
	}
}

// post sends a JSON body as the admin; unlike do it may run on any
// goroutine.
func post(s *testserver.Server, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, s.URL+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.Client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// resourcePath is the collection URL of a namespaced custom object in
// namespace default, from the CRDs' plural names.
func resourcePath(plurals map[string]string, obj map[string]any) string {
	gv := obj["apiVersion"].(string)
	group := gv[:strings.Index(gv, "/")]
	return "/apis/" + gv + "/namespaces/default/" + plurals[group+"/"+obj["kind"].(string)]
}

// TestRealWorldCRDsWithRules applies every CustomResourceDefinition of the
// cert-manager, prometheus-operator, Gateway API and KEDA manifests (most
// with x-kubernetes-validations rules), waits until each is served, then
// creates their example objects and refuses broken variants with
// kube-apiserver's messages.
func TestRealWorldCRDsWithRules(t *testing.T) {
	s, kv := start(t, nil)
	files, err := filepath.Glob("testdata/realworld/*-crds.yaml.gz")
	if err != nil || len(files) != 4 {
		t.Fatalf("testdata: %v %v", files, err)
	}
	var crds []map[string]any
	for _, file := range files {
		for _, doc := range readDocuments(t, file) {
			if doc["kind"] == "CustomResourceDefinition" { // not the Gateway API's ValidatingAdmissionPolicy and binding
				crds = append(crds, doc)
			}
		}
	}
	// Two clients at a time: the CRDs are large, and the machine small.
	errs := make([]string, len(crds))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, doc := range crds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			body, _ := json.Marshal(doc)
			code, resp, err := post(s, crdPath, body)
			if err != nil || code != http.StatusCreated {
				errs[i] = fmt.Sprintf("CRD %s refused: %v %d %.2000s", doc["metadata"].(map[string]any)["name"], err, code, resp)
			}
		}()
	}
	wg.Wait()
	plurals := map[string]string{}
	var served []string
	withRules := 0
	for i, doc := range crds {
		if errs[i] != "" {
			t.Error(errs[i])
			continue
		}
		if body, _ := json.Marshal(doc); bytes.Contains(body, []byte("x-kubernetes-validations")) {
			withRules++
		}
		spec := doc["spec"].(map[string]any)
		names := spec["names"].(map[string]any)
		plurals[spec["group"].(string)+"/"+names["kind"].(string)] = names["plural"].(string)
		for _, v := range spec["versions"].([]any) {
			if v := v.(map[string]any); v["served"] == true {
				served = append(served, "/apis/"+spec["group"].(string)+"/"+v["name"].(string)+"/"+names["plural"].(string))
			}
		}
	}
	if len(plurals) != 32 || withRules != 18 {
		t.Errorf("applied %d CRDs, %d with rules; want 32, 18", len(plurals), withRules)
	}
	for _, p := range served {
		waitFor(t, p+" served", func() bool {
			code, _, _ := do(t, s, http.MethodGet, p, "", "")
			return code == http.StatusOK
		})
	}

	for _, obj := range readDocuments(t, "testdata/realworld/examples.yaml") {
		name := obj["metadata"].(map[string]any)["name"].(string)
		body, _ := json.Marshal(obj)
		if code, resp, _ := do(t, s, http.MethodPost, resourcePath(plurals, obj), "application/json", string(body)); code != http.StatusCreated {
			t.Errorf("example %s %s refused: %d %s", obj["kind"], name, code, resp)
		}
	}

	for _, tc := range []struct {
		name, yaml, group, kind string
		want                    invalid
	}{
		{"HTTPRoute path not absolute", `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: foo-route-broken}
spec:
  parentRefs: [{name: example-gateway}]
  hostnames: ["foo.example.com"]
  rules:
  - matches: [{path: {type: PathPrefix, value: login}}]
    backendRefs: [{name: foo-svc, port: 8080}]`, "gateway.networking.k8s.io", "HTTPRoute",
			inv(`HTTPRoute.gateway.networking.k8s.io "foo-route-broken" is invalid: spec.rules[0].matches[0].path: Invalid value: value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']`,
				invalidCause("spec.rules[0].matches[0].path", "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']"))},
		{"Gateway listener names not unique", `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: example-gateway-broken}
spec:
  gatewayClassName: example-gateway-class
  listeners:
  - {name: http, protocol: HTTP, port: 80}
  - {name: http, protocol: HTTP, port: 8080}`, "gateway.networking.k8s.io", "Gateway",
			inv(`Gateway.gateway.networking.k8s.io "example-gateway-broken" is invalid: [spec.listeners[1]: Duplicate value: {"name":"http"}, spec.listeners: Invalid value: Listener name must be unique within the Gateway]`,
				cause{"FieldValueDuplicate", `Duplicate value: {"name":"http"}`, "spec.listeners[1]"},
				invalidCause("spec.listeners", "Listener name must be unique within the Gateway"))},
		{"cert-manager Issuer with two Venafi backends", `
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: venafi-broken}
spec:
  venafi:
    zone: "DevOps\\cert-manager"
    tpp: {url: "https://tpp.example.com/vedsdk", credentialsRef: {name: tpp-secret}}
    cloud: {apiTokenSecretRef: {name: cloud-secret, key: apikey}}`, "cert-manager.io", "Issuer",
			inv(`Issuer.cert-manager.io "venafi-broken" is invalid: spec.venafi: Invalid value: exactly one of tpp, cloud, or ngts must be configured`,
				invalidCause("spec.venafi", "exactly one of tpp, cloud, or ngts must be configured"))},
		{"KEDA ScaledObject min above max", `
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: worker-broken}
spec:
  scaleTargetRef: {name: worker}
  minReplicaCount: 5
  maxReplicaCount: 2
  triggers: [{type: cpu, metadata: {value: "50"}}]`, "keda.sh", "ScaledObject",
			inv(`ScaledObject.keda.sh "worker-broken" is invalid: spec: Invalid value: minReplicaCount must be less than or equal to maxReplicaCount`,
				invalidCause("spec", "minReplicaCount must be less than or equal to maxReplicaCount"))},
		{"PrometheusAgent DaemonSet with replicas", `
apiVersion: monitoring.coreos.com/v1alpha1
kind: PrometheusAgent
metadata: {name: agent-broken}
spec: {mode: DaemonSet, replicas: 2}`, "monitoring.coreos.com", "PrometheusAgent",
			inv(`PrometheusAgent.monitoring.coreos.com "agent-broken" is invalid: spec: Invalid value: replicas cannot be set when mode is DaemonSet`,
				invalidCause("spec", "replicas cannot be set when mode is DaemonSet"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := yamlToJSON(t, tc.yaml)
			obj := decode[map[string]any](t, []byte(body))
			name := obj["metadata"].(map[string]any)["name"].(string)
			path := resourcePath(plurals, obj)
			code, resp, _ := do(t, s, http.MethodPost, path, "application/json", body)
			checkInvalid(t, code, resp, tc.group, tc.kind, name, tc.want)
			key := "/registry/" + tc.group + "/" + path[strings.LastIndex(path, "/")+1:] + "/default/" + name
			unchanged(t, kv, key, nil)
		})
	}

	// A valid variant of each broken kind passes.
	for _, y := range []string{`
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: venafi}
spec:
  venafi:
    zone: "DevOps\\cert-manager"
    tpp: {url: "https://tpp.example.com/vedsdk", credentialsRef: {name: tpp-secret}}`, `
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: worker}
spec:
  scaleTargetRef: {name: worker}
  minReplicaCount: 1
  maxReplicaCount: 5
  triggers: [{type: cpu, metadata: {value: "50"}}]`} {
		body := yamlToJSON(t, y)
		obj := decode[map[string]any](t, []byte(body))
		if code, resp, _ := do(t, s, http.MethodPost, resourcePath(plurals, obj), "application/json", body); code != http.StatusCreated {
			t.Errorf("%s: %d %s", obj["kind"], code, resp)
		}
	}
}
