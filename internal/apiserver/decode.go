package apiserver

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// DefaultMaxBodyBytes is Kubernetes' limit on request bodies (3 MiB).
const DefaultMaxBodyBytes = 3 << 20

// readBody reads the request body, refusing more than limit bytes with 413.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading request body: %v", err))
	}
	if int64(len(body)) > limit {
		return nil, tooLarge(limit)
	}
	return body, nil
}

func tooLarge(limit int64) error {
	return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
}

// fieldValidation is the ?fieldValidation= directive.
type fieldValidation string

const (
	validationStrict fieldValidation = "Strict"
	validationWarn   fieldValidation = "Warn"
	validationIgnore fieldValidation = "Ignore"
)

// parseFieldValidation returns the ?fieldValidation= directive; an unknown
// value is refused (as kube-apiserver's options validation refuses it, with
// a 422, before this is asked).
func parseFieldValidation(r *http.Request) (fieldValidation, error) {
	switch v := r.URL.Query().Get("fieldValidation"); v {
	case "", string(validationWarn):
		return validationWarn, nil
	case string(validationStrict), string(validationIgnore):
		return fieldValidation(v), nil
	default:
		return "", optionsInvalid(createOptions, metavalidation.ValidateFieldValidation(field.NewPath("fieldValidation"), v))
	}
}

// decodeObject decodes a create or update body into a new object of the
// resource's type. The body's apiVersion and kind, when present, must be
// the resource's. Unknown or duplicate fields are refused (Strict), sent
// back as warnings (Warn) or dropped (Ignore).
func (s *Server) decodeObject(w http.ResponseWriter, r *http.Request, e *entry, body []byte) (runtime.Object, error) {
	fv, err := parseFieldValidation(r)
	if err != nil {
		return nil, err
	}
	ctype := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ctype)
	if ctype == "" {
		mt, err = mimeJSON, nil
	}
	if err != nil {
		return nil, unsupportedMediaType(e.res.Unstructured)
	}
	var dec runtime.Decoder
	switch mt {
	case mimeJSON:
		dec = pick(fv, s.codecs.StrictJSON, s.codecs.JSON)
	case mimeYAML, "application/x-yaml", "text/yaml":
		dec = pick(fv, s.codecs.StrictYAML, s.codecs.YAML)
	case mimeProtobuf:
		if e.res.Unstructured {
			return nil, unsupportedMediaType(e.res.Unstructured) // as Kubernetes: custom resources have no protobuf form
		}
		dec = s.codecs.Proto
	default:
		return nil, unsupportedMediaType(e.res.Unstructured)
	}
	return s.decodeInto(w, e, dec, fv, body)
}

// decodeOptionsBody decodes the body of a request whose payload is not the
// resource itself (DeleteOptions, Scale, Binding) into into, with the
// decoder its Content-Type names: JSON (the default), YAML or protobuf, as
// client-go's clientset sends protobuf for built-in kinds.
func (s *Server) decodeOptionsBody(r *http.Request, body []byte, gvk *schema.GroupVersionKind, into runtime.Object) error {
	dec, err := s.optionsDecoder(r)
	if err != nil {
		return err
	}
	_, _, err = dec.Decode(body, gvk, into)
	return err
}

// optionsDecoder is the decoder of a non-object body's Content-Type.
func (s *Server) optionsDecoder(r *http.Request) (runtime.Decoder, error) {
	ctype := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ctype)
	if ctype == "" {
		mt, err = mimeJSON, nil
	}
	if err != nil {
		return nil, unsupportedMediaType(false)
	}
	switch mt {
	case mimeJSON:
		return s.codecs.JSON, nil
	case mimeYAML, "application/x-yaml", "text/yaml":
		return s.codecs.YAML, nil
	case mimeProtobuf:
		return s.codecs.Proto, nil
	}
	return nil, unsupportedMediaType(false)
}

func pick(fv fieldValidation, strict, lax *json.Serializer) runtime.Decoder {
	if fv == validationIgnore {
		return lax
	}
	return strict
}

// decodeInto decodes body with dec into a new object of e's kind, applying
// field-validation policy fv to strict-decoding errors.
func (s *Server) decodeInto(w http.ResponseWriter, e *entry, dec runtime.Decoder, fv fieldValidation, body []byte) (runtime.Object, error) {
	want := e.res.GVK()
	obj, gvk, err := dec.Decode(body, &want, e.res.New())
	if err != nil && runtime.IsStrictDecodingError(err) && obj != nil && fv != validationStrict {
		if fv == validationWarn {
			serr, _ := runtime.AsStrictDecodingError(err)
			for _, msg := range serr.Errors() {
				addWarning(w, msg.Error())
			}
		}
		err = nil
	}
	if err != nil {
		return nil, decodeError(want, gvk, body, err)
	}
	if gvk != nil && (gvk.Kind != want.Kind || gvk.GroupVersion() != want.GroupVersion()) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf(
			"%s in version %q cannot be handled as a %s: the object's kind does not match the request URL (%s)",
			gvk.Kind, gvk.GroupVersion().String(), want.Kind, want.GroupVersion().WithKind(want.Kind)))
	}
	obj.GetObjectKind().SetGroupVersionKind(want)
	if err := s.pruneUnknown(w, e, fv, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// pruneUnknown drops the fields a custom resource's schema does not know
// and applies field-validation policy fv to them, as Kubernetes does:
// Strict refuses the object (400, naming every field), Warn sends one
// warning per field, Ignore drops them silently.
func (s *Server) pruneUnknown(w http.ResponseWriter, e *entry, fv fieldValidation, obj runtime.Object) error {
	p, ok := e.res.Strategy.(registry.Pruner)
	if !ok {
		return nil
	}
	pruned := p.Prune(obj)
	if len(pruned) == 0 || fv == validationIgnore {
		return nil
	}
	msgs := make([]string, len(pruned))
	for i, path := range pruned {
		msgs[i] = fmt.Sprintf("unknown field %q", path)
	}
	if fv == validationStrict {
		want := e.res.GVK()
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: strict decoding error: %s",
			want.Kind, want.Version, want.Kind, strings.Join(msgs, ", ")))
	}
	for _, msg := range msgs {
		addWarning(w, msg)
	}
	return nil
}

// decodeError is kube-apiserver's answer to a body that does not decode
// into the resource's kind: naming the kind and version the body gave when
// it gave a kind, else the start of the body.
func decodeError(want schema.GroupVersionKind, got *schema.GroupVersionKind, body []byte, err error) error {
	var api apierrors.APIStatus
	if errors.As(err, &api) {
		return err
	}
	if got != nil && got.Kind != "" {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v",
			got.Kind, got.Version, want.Kind, err))
	}
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)",
		want.Kind, err, summarizeBody(body, 30)))
}

// summarizeBody quotes the start of a body in an error as kube-apiserver
// does: "<empty>", the text of a JSON object, else hex.
func summarizeBody(b []byte, limit int) string {
	more := ""
	if len(b) > limit {
		b, more = b[:limit], " ..."
	}
	switch {
	case len(b) == 0:
		return "<empty>"
	case b[0] == '{':
		return string(b) + more
	default:
		return hex.EncodeToString(b) + more
	}
}
