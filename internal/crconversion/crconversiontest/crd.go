package crconversiontest

import (
	"encoding/json"
)

// CRD is the JSON of the Widget CustomResourceDefinition of group
// (namespaced, plural widgets): v1 (spec.hostPort string) and v2
// (spec.host string, spec.port integer), both with spec.replicas, status
// and scale subresources; storage is the storage version; converted by w
// (ConversionReview v1).
func (w *Webhook) CRD(group, storage string) []byte {
	return w.crd(group, storage, map[string]any{"url": w.URL, "caBundle": w.CABundle})
}

// ServiceCRD is CRD with the webhook named by a Service reference
// (namespace/name, port 443, path /convert) instead of its URL.
func (w *Webhook) ServiceCRD(group, storage, namespace, name string) []byte {
	return w.crd(group, storage, map[string]any{"caBundle": w.CABundle,
		"service": map[string]any{"namespace": namespace, "name": name, "path": "/convert"}})
}

func (w *Webhook) crd(group, storage string, clientConfig map[string]any) []byte {
	version := func(name, spec string) map[string]any {
		var props map[string]any
		if err := json.Unmarshal([]byte(spec), &props); err != nil {
			panic(err)
		}
		return map[string]any{"name": name, "served": true, "storage": name == storage,
			"subresources": map[string]any{"status": map[string]any{},
				"scale": map[string]any{"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
				"spec":   map[string]any{"type": "object", "properties": props},
				"status": map[string]any{"type": "object", "properties": map[string]any{"replicas": map[string]any{"type": "integer"}}},
			}}}}
	}
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget"},
			"versions": []any{
				version("v1", `{"hostPort":{"type":"string"},"replicas":{"type":"integer"}}`),
				version("v2", `{"host":{"type":"string"},"port":{"type":"integer"},"replicas":{"type":"integer"}}`),
			},
			"conversion": map[string]any{"strategy": "Webhook", "webhook": map[string]any{
				"conversionReviewVersions": []string{"v1"},
				"clientConfig":             clientConfig,
			}},
		},
	}
	b, err := json.Marshal(crd)
	if err != nil {
		panic(err)
	}
	return b
}
