package apiserver

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/internal/audit"
	"github.com/setpoint-dev/setpoint/internal/scheme"
)

// responder encodes objects and errors for one server.
type responder struct {
	codecs *scheme.Codecs
	log    *slog.Logger
}

// encode renders obj in media type mt (JSON, YAML or protobuf).
func (rs *responder) encode(mt mediaType, obj runtime.Object) ([]byte, string, error) {
	var buf bytes.Buffer
	switch mt.Type {
	case mimeProtobuf:
		if err := rs.codecs.Proto.Encode(obj, &buf); err != nil {
			return nil, "", err
		}
		return buf.Bytes(), mimeProtobuf, nil
	case mimeYAML:
		if err := rs.codecs.JSON.Encode(obj, &buf); err != nil {
			return nil, "", err
		}
		y, err := yaml.JSONToYAML(buf.Bytes())
		return y, mimeYAML, err
	default:
		if err := rs.codecs.JSON.Encode(obj, &buf); err != nil {
			return nil, "", err
		}
		return buf.Bytes(), mimeJSON, nil
	}
}

// writeObject sends obj with HTTP status code in the negotiated format.
func (rs *responder) writeObject(w http.ResponseWriter, r *http.Request, code int, mt mediaType, obj runtime.Object) {
	body, ctype, err := rs.encode(mt, obj)
	if err != nil {
		rs.writeError(w, r, apierrors.NewInternalError(fmt.Errorf("encode response: %w", err)))
		return
	}
	audit.LogResponseObject(r.Context(), obj, rs.auditEncoder)
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-cache, private")
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// statusOf converts any error to the Status Kubernetes clients expect:
// kind Status and a code, with details as the error has them (as
// kube-apiserver: a BadRequest from decoding has none, a NotFound names
// what was not found).
func statusOf(err error) *metav1.Status {
	var api apierrors.APIStatus
	var s metav1.Status
	if errors.As(err, &api) {
		s = api.Status()
		if s.Code == 0 {
			s.Code = http.StatusInternalServerError
		}
	} else {
		s = apierrors.NewInternalError(err).ErrStatus
	}
	s.Kind, s.APIVersion = "Status", "v1"
	return &s
}

// writeError sends err as a Status with its code (and Retry-After when the
// status carries retryAfterSeconds).
func (rs *responder) writeError(w http.ResponseWriter, r *http.Request, err error) {
	st := statusOf(err)
	switch {
	case st.Code == http.StatusInternalServerError:
		rs.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "code", st.Code, "err", err)
	case st.Code > http.StatusInternalServerError:
		rs.log.Debug("request refused", "method", r.Method, "path", r.URL.Path, "code", st.Code, "err", err)
	}
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	mt, ok := negotiate(r.Header.Get("Accept"))
	if !ok || mt.As != "" {
		mt = mediaType{Type: mimeJSON}
	}
	rs.writeObject(w, r, int(st.Code), mt, st)
}
