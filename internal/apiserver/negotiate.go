package apiserver

import (
	"mime"
	"strings"
)

// mediaType is one acceptable response format.
type mediaType struct {
	// Type is "application/json", "application/yaml" or
	// "application/vnd.kubernetes.protobuf".
	Type string
	// As is "", "Table" or "PartialObjectMetadata" (meta.k8s.io views).
	As string
	// AsList is set when the client asked for PartialObjectMetadataList.
	AsList bool
	// AsVersion is the meta.k8s.io version of the view: v1 or v1beta1.
	AsVersion string
}

const (
	mimeJSON     = "application/json"
	mimeYAML     = "application/yaml"
	mimeProtobuf = "application/vnd.kubernetes.protobuf"
)

// negotiate picks the first acceptable format in the Accept header (in
// order of preference as written, skipping q=0). ok is false when the
// client accepts nothing we can produce.
func negotiate(accept string) (mediaType, bool) { return negotiateFor(accept, true) }

// negotiateFor is negotiate for a resource that may have no protobuf form
// (custom resources): then protobuf is skipped, so a client that also
// accepts JSON gets JSON, and one that accepts only protobuf gets 406.
// As kube-apiserver, the meta.k8s.io views decide for themselves:
// PartialObjectMetadata(List) has a protobuf form whatever the resource
// (a metadata client's watch of a custom resource is protobuf), a Table
// has none (kube-apiserver serves it in JSON and YAML only).
func negotiateFor(accept string, protobuf bool) (mediaType, bool) {
	if strings.TrimSpace(accept) == "" {
		return mediaType{Type: mimeJSON}, true
	}
	for _, part := range strings.Split(accept, ",") {
		typ, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || params["q"] == "0" {
			continue
		}
		var mt mediaType
		switch typ {
		case mimeJSON, "*/*", "application/*":
			mt.Type = mimeJSON
		case mimeYAML:
			mt.Type = mimeYAML
		case mimeProtobuf:
			if !protobuf && !strings.HasPrefix(params["as"], "PartialObjectMetadata") {
				continue
			}
			mt.Type = mimeProtobuf
		default:
			continue
		}
		if as := params["as"]; as != "" {
			if params["g"] != "meta.k8s.io" || (params["v"] != "v1" && params["v"] != "v1beta1") {
				continue
			}
			if as != "Table" && as != "PartialObjectMetadata" && as != "PartialObjectMetadataList" {
				continue
			}
			if as == "Table" && mt.Type == mimeProtobuf {
				continue
			}
			mt.As, mt.AsList, mt.AsVersion = strings.TrimSuffix(as, "List"), strings.HasSuffix(as, "List"), params["v"]
		}
		return mt, true
	}
	return mediaType{}, false
}
