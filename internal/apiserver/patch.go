package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/internal/objects"
)

// The patch content types Kubernetes accepts.
const (
	patchJSON      = "application/json-patch+json"
	patchMerge     = "application/merge-patch+json"
	patchStrategic = "application/strategic-merge-patch+json"
	patchApply     = "application/apply-patch+yaml"
)

// patcher applies one patch document to JSON.
type patcher struct {
	kind string
	body []byte
	// schema is an empty object of the resource's Go type, for strategic
	// merge patch.
	schema runtime.Object
	gr     schema.GroupResource
}

func newPatcher(r *http.Request, body []byte, obj runtime.Object, gr schema.GroupResource) (*patcher, error) {
	ctype := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ctype)
	if err != nil {
		return nil, unsupportedPatch(ctype)
	}
	switch mt {
	case patchJSON, patchMerge, patchStrategic, patchApply:
	default:
		return nil, unsupportedPatch(ctype)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, apierrors.NewBadRequest("the patch body is empty")
	}
	if mt == patchApply {
		return &patcher{kind: mt, body: body, schema: obj, gr: gr}, nil // YAML, decoded by the field manager
	}
	if !json.Valid(body) {
		return nil, apierrors.NewBadRequest("the patch body is not valid JSON")
	}
	if mt == patchJSON {
		if _, err := jsonpatch.DecodePatch(body); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid JSON patch: %v", err))
		}
	}
	return &patcher{kind: mt, body: body, schema: obj, gr: gr}, nil
}

func unsupportedPatch(ctype string) error {
	return newStatusError(http.StatusUnsupportedMediaType, "UnsupportedMediaType", fmt.Sprintf(
		"the body of the request was in an unknown format - accepted media types include: %s, %s, %s, %s (got %q)",
		patchJSON, patchMerge, patchStrategic, patchApply, ctype))
}

// apply patches the JSON document cur.
func (p *patcher) apply(cur []byte) ([]byte, error) {
	var out []byte
	var err error
	switch p.kind {
	case patchJSON:
		var ops jsonpatch.Patch
		ops, err = jsonpatch.DecodePatch(p.body)
		if err == nil {
			out, err = ops.Apply(cur)
		}
	case patchMerge:
		out, err = jsonpatch.MergePatch(cur, p.body)
	case patchStrategic:
		out, err = strategicpatch.StrategicMergePatch(cur, p.body, p.schema)
	default:
		err = fmt.Errorf("%s is not supported on this endpoint", p.kind)
	}
	if err != nil {
		// As kube-apiserver: a patch that does not apply (a failed JSON
		// patch test, a path that is not there) is a 422 naming no resource,
		// so the message is the generic one and kubectl prints "The request
		// is invalid: ..." rather than `The deployments "" is invalid`.
		return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	}
	return out, nil
}

// setsResourceVersion reports whether the patch itself names
// metadata.resourceVersion, which makes the patch conditional on it.
func (p *patcher) setsResourceVersion() bool {
	if p.kind == patchJSON {
		var ops []struct {
			Path string `json:"path"`
		}
		_ = json.Unmarshal(p.body, &ops)
		for _, op := range ops {
			if op.Path == "/metadata/resourceVersion" {
				return true
			}
		}
		return false
	}
	var doc struct {
		Metadata struct {
			ResourceVersion *string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if p.kind == patchApply {
		_ = yaml.Unmarshal(p.body, &doc)
	} else {
		_ = json.Unmarshal(p.body, &doc)
	}
	return doc.Metadata.ResourceVersion != nil
}

func (s *Server) handlePatch(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType) {
	fv, err := parseFieldValidation(r)
	var dry bool
	var body []byte
	if err == nil {
		dry, body, err = s.readWrite(r)
	}
	var p *patcher
	if err == nil {
		p, err = newPatcher(r, body, e.res.New(), e.gr())
	}
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	if p.kind == patchStrategic && e.res.Unstructured {
		// As Kubernetes: strategic merge needs a Go type's patch tags.
		s.resp.writeError(w, r, newStatusError(http.StatusUnsupportedMediaType, "UnsupportedMediaType",
			fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s, %s, %s",
				patchJSON, patchMerge, patchApply)))
		return
	}
	if p.kind == patchApply {
		s.handleApply(w, r, e, info, mt, p, dry, fv)
		return
	}
	manager, _, err := patchOptions(r, p.kind)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	conditional := p.setsResourceVersion()
	fn := func(current runtime.Object) (runtime.Object, error) {
		if current == nil {
			return nil, apierrors.NewNotFound(e.gr(), info.Name)
		}
		var buf bytes.Buffer
		if err := s.codecs.JSON.Encode(current, &buf); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		patched, err := p.apply(buf.Bytes())
		if err != nil {
			return nil, err
		}
		obj, err := s.decodeInto(w, e, pick(fv, s.codecs.StrictJSON, s.codecs.JSON), fv, patched)
		if err != nil {
			return nil, err
		}
		if !conditional {
			objectMeta(obj).SetResourceVersion("")
		}
		return e.trackUpdate(current, obj, manager, info.Subresource), nil
	}
	opts := objects.UpdateOptions{WriteOptions: objects.WriteOptions{DryRun: dry}, Subresource: info.Subresource}
	out, _, err := e.store.Update(r.Context(), info.Namespace, info.Name, fn, opts)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	s.writeResult(w, r, http.StatusOK, mt, e, out)
}
