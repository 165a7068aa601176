package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/internal/audit"
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

// patchType returns the patch type a PATCH names by its Content-Type, or
// the 415 kube-apiserver's router answers for one its route does not
// consume (custom resources take no strategic merge patch).
func patchType(r *http.Request, custom bool) (string, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return "", unsupportedPatch()
	}
	switch mt {
	case patchJSON, patchMerge, patchApply:
		return mt, nil
	case patchStrategic:
		if !custom {
			return mt, nil
		}
	}
	return "", unsupportedPatch()
}

// unsupportedPatch is the router's 415 for a PATCH body of a media type the
// route does not consume.
func unsupportedPatch() error {
	err := newStatusError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType, "415: Unsupported Media Type")
	err.ErrStatus.Details = &metav1.StatusDetails{}
	return err
}

// newPatcher checks a patch body of type kind: JSON for every type but
// apply (YAML, decoded by the field manager).
func newPatcher(kind string, body []byte, obj runtime.Object, gr schema.GroupResource) (*patcher, error) {
	if kind == patchApply {
		if len(bytes.TrimSpace(body)) == 0 {
			return nil, apierrors.NewBadRequest("the patch body is empty")
		}
		return &patcher{kind: kind, body: body, schema: obj, gr: gr}, nil
	}
	if !json.Valid(body) {
		return nil, apierrors.NewBadRequest("invalid JSON patch")
	}
	if kind == patchJSON {
		if _, err := jsonpatch.DecodePatch(body); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	}
	return &patcher{kind: kind, body: body, schema: obj, gr: gr}, nil
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

// readPatch checks a PATCH as kube-apiserver does, in its order: the
// media type (415), the PatchOptions (422), then the body.
func (s *Server) readPatch(r *http.Request, e *entry, obj runtime.Object) (p *patcher, manager string, dry bool, err error) {
	kind, err := patchType(r, e.res.Unstructured)
	if err != nil {
		return nil, "", false, err
	}
	if manager, _, err = patchOptions(r, kind); err != nil {
		return nil, "", false, err
	}
	body, err := readBody(r, s.cfg.MaxBodyBytes)
	if err != nil {
		return nil, "", false, err
	}
	if p, err = newPatcher(kind, body, obj, e.gr()); err == nil {
		audit.LogRequestPatch(r.Context(), body)
	}
	return p, manager, len(r.URL.Query()["dryRun"]) > 0, err
}

func (s *Server) handlePatch(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType) {
	p, manager, dry, err := s.readPatch(r, e, e.res.New())
	var fv fieldValidation
	if err == nil {
		fv, err = parseFieldValidation(r)
	}
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	if p.kind == patchApply {
		s.handleApply(w, r, e, info, mt, p, dry, fv)
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
