package apiserver

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/setpoint-dev/setpoint/internal/audit"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// withAuditInit is the outermost filter, as kube-apiserver's: every request
// gets an audit ID (the client's Audit-ID header, else a new UUID), echoed
// in the Audit-Id response header whether or not auditing is on.
func withAuditInit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(audit.HeaderAuditID)
		if id == "" {
			id = string(uuid.NewUUID())
		}
		if w.Header().Get(audit.HeaderAuditID) == "" {
			w.Header().Set(audit.HeaderAuditID, id)
		}
		next.ServeHTTP(w, r.WithContext(audit.WithRequest(r.Context(), id, time.Now())))
	})
}

// withAudit writes the audit events of authenticated requests: the policy
// is evaluated on the request's attributes (as the authenticated user,
// before impersonation); then RequestReceived, ResponseStarted for
// long-running requests once their headers are out, and ResponseComplete
// (or Panic) at the end.
func (s *Server) withAudit(next http.Handler) http.Handler {
	a := s.cfg.Audit
	if a == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if a.Begin(ctx, auditMetadata(r)) == audit.LevelNone {
			next.ServeHTTP(w, r)
			return
		}
		defer a.End()
		if !audit.ProcessStage(ctx, audit.StageRequestReceived) {
			a.Rejected()
			s.resp.writeError(w, r, apierrors.NewInternalError(errors.New("failed to store audit event")))
			return
		}
		long := isWatch(r)
		if info, ok := parseResourcePath(r); ok && isLongRunning(info) {
			long = true
		}
		aw := &auditWriter{ResponseWriter: w, r: r, long: long}
		defer func() {
			if v := recover(); v != nil {
				audit.SetResponseStatus(ctx, &metav1.Status{
					Code: http.StatusInternalServerError, Status: metav1.StatusFailure,
					Reason: metav1.StatusReasonInternalError, Message: fmt.Sprintf("APIServer panic'd: %v", v),
				})
				audit.ProcessStage(ctx, audit.StagePanic)
				panic(v)
			}
			if !audit.HasResponseStatus(ctx) {
				// Neither a code nor a body was sent: as kube-apiserver.
				audit.SetResponseStatus(ctx, &metav1.Status{Code: http.StatusOK, Status: metav1.StatusSuccess, Message: "Connection closed early"})
				if long {
					audit.ProcessStage(ctx, audit.StageResponseStarted)
				}
			}
			audit.ProcessStage(ctx, audit.StageResponseComplete)
		}()
		next.ServeHTTP(aw, r)
	})
}

// auditFailedAuthentication serves a refused authentication (refuse
// writes the 401): as kube-apiserver, the event (the user unknown) is
// written once, at ResponseStarted.
func (s *Server) auditFailedAuthentication(w http.ResponseWriter, r *http.Request, refuse func(http.ResponseWriter)) {
	a := s.cfg.Audit
	ctx := r.Context()
	if a == nil || a.Begin(ctx, auditMetadata(r)) == audit.LevelNone {
		refuse(w)
		return
	}
	defer a.End()
	audit.SetResponseStatus(ctx, &metav1.Status{Message: authMethods(r)})
	refuse(&auditWriter{ResponseWriter: w, r: r, long: true})
}

// authMethods says which credentials a refused request carried.
func authMethods(r *http.Request) string {
	var methods []string
	if _, _, ok := r.BasicAuth(); ok {
		methods = append(methods, "basic")
	}
	if parts := strings.Split(strings.TrimSpace(r.Header.Get("Authorization")), " "); len(parts) > 1 && strings.EqualFold(parts[0], "bearer") {
		methods = append(methods, "bearer")
	}
	if strings.TrimSpace(r.URL.Query().Get("access_token")) != "" {
		methods = append(methods, "access_token")
	}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		methods = append(methods, "x509")
	}
	if len(methods) == 0 {
		return "Authentication failed, no credentials provided"
	}
	return "Authentication failed, attempted: " + strings.Join(methods, ", ")
}

// auditMetadata is what the policy and the event need of a request.
func auditMetadata(r *http.Request) audit.RequestMetadata {
	u := registry.UserFrom(r.Context())
	md := audit.RequestMetadata{
		Attributes: requestAttributes(r, u.AuthorizerUser()),
		RequestURI: r.URL.RequestURI(),
		UserAgent:  r.UserAgent(),
	}
	if len(md.UserAgent) > 1024 {
		md.UserAgent = md.UserAgent[:1024] + "...TRUNCATED"
	}
	for _, ip := range utilnet.SourceIPs(r) {
		md.SourceIPs = append(md.SourceIPs, ip.String())
	}
	if u.Name != "" {
		md.User = authnv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
		for k, v := range u.Extra {
			if md.User.Extra == nil {
				md.User.Extra = map[string]authnv1.ExtraValue{}
			}
			md.User.Extra[k] = v
		}
	}
	return md
}

// auditEncoder renders objects for the audit log as the server sends JSON.
func (rs *responder) auditEncoder(o runtime.Object) ([]byte, error) {
	b, _, err := rs.encode(mediaType{Type: mimeJSON}, o)
	return b, err
}

// auditWriter records the answer's code in the request's event, and for
// long-running requests writes the ResponseStarted event when the headers
// go out (101 on a protocol upgrade).
type auditWriter struct {
	http.ResponseWriter
	r    *http.Request
	long bool
	once sync.Once
}

func (a *auditWriter) processCode(code int) {
	a.once.Do(func() {
		audit.SetResponseCode(a.r.Context(), code)
		if a.long {
			audit.ProcessStage(a.r.Context(), audit.StageResponseStarted)
		}
	})
}

func (a *auditWriter) WriteHeader(code int) {
	a.processCode(code)
	a.ResponseWriter.WriteHeader(code)
}

func (a *auditWriter) Write(b []byte) (int, error) {
	a.processCode(http.StatusOK)
	return a.ResponseWriter.Write(b)
}

// Flush sends the headers (200 unless written) and what is buffered.
func (a *auditWriter) Flush() {
	a.processCode(http.StatusOK)
	_ = http.NewResponseController(a.ResponseWriter).Flush()
}

// Hijack records 101 before the connection changes protocol.
func (a *auditWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	a.processCode(http.StatusSwitchingProtocols)
	return http.NewResponseController(a.ResponseWriter).Hijack()
}

// Unwrap exposes the underlying writer to http.ResponseController.
func (a *auditWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// auditRequestObject records a decoded request body in the request's
// event. As kube-apiserver records the body once decoded into its internal
// form, a resource's object is recorded with its defaults (defaulted: the
// kind's defaulting runs on a copy).
func (s *Server) auditRequestObject(r *http.Request, e *entry, obj runtime.Object, defaulted bool) {
	ctx := r.Context()
	if audit.LevelFrom(ctx) == audit.LevelNone {
		return
	}
	if defaulted && e.res.Strategy != nil && !audit.LevelFrom(ctx).Less(audit.LevelRequest) {
		obj = obj.DeepCopyObject()
		e.res.Strategy.Default(obj)
	}
	audit.LogRequestObject(ctx, obj, e.res.GVR(), "", s.resp.auditEncoder)
}

// auditDeleteOptions renders DeleteOptions as kube-apiserver records them:
// in the options' internal version (apiVersion meta.k8s.io/__internal).
func auditDeleteOptions(o runtime.Object) ([]byte, error) {
	opts, ok := o.(*metav1.DeleteOptions)
	if !ok {
		return nil, fmt.Errorf("not DeleteOptions: %T", o)
	}
	c := *opts
	c.TypeMeta = metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "meta.k8s.io/__internal"}
	return json.Marshal(&c)
}
