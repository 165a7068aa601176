package apiserver

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/internal/audit"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// withImpersonation lets a request act as another user (the
// Impersonate-User, Impersonate-Uid, Impersonate-Group and
// Impersonate-Extra-<key> headers, `kubectl --as`), when the authenticated
// user may impersonate it, as kube-apiserver v1.37 decides with
// constrained impersonation (impersonationModes): the impersonated user
// replaces the request's user (registry.WithUser) and the headers are
// removed. A uid, group or extra without a user name is a 400; a refusal
// is kube-apiserver's 403 for the first check that failed.
func (s *Server) withImpersonation(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wanted, err := impersonationHeaders(r.Header)
		if err != nil {
			s.resp.writeError(w, r, err)
			return
		}
		if wanted == nil {
			next.ServeHTTP(w, r)
			return
		}
		requestor := registry.UserFrom(r.Context())
		if requestor.Name == "" {
			s.resp.writeError(w, r, apierrors.NewUnauthorized("Unauthorized"))
			return
		}
		attrs := requestAttributes(r, requestor.AuthorizerUser())
		u, err := s.impersonation.impersonate(r.Context(), *wanted, attrs)
		if err != nil {
			s.log.Debug("impersonation refused", "user", requestor.Name, "as", wanted.Name, "err", err)
			s.resp.writeError(w, r, err)
			return
		}
		s.log.Debug("impersonating", "user", requestor.Name, "as", u.Name, "groups", u.Groups)
		audit.LogImpersonatedUser(r.Context(), auditUser(u))
		next.ServeHTTP(w, r.WithContext(registry.WithUser(r.Context(), u)))
	})
}

// impersonationHeaders reads the user the headers ask to act as, nil when
// they ask for none, and removes them from h when they do. The error for
// a uid, group or extra without a user name is kube-apiserver's 400,
// which prints the requested user as Go prints kube's user.DefaultInfo.
func impersonationHeaders(h http.Header) (*registry.UserInfo, error) {
	var u registry.UserInfo
	u.Name = h.Get(authenticationv1.ImpersonateUserHeader)
	u.UID = h.Get(authenticationv1.ImpersonateUIDHeader)
	u.Groups = append(u.Groups, h[authenticationv1.ImpersonateGroupHeader]...)
	hasExtra := false
	for name, values := range h {
		key, ok := strings.CutPrefix(name, authenticationv1.ImpersonateUserExtraHeaderPrefix)
		if !ok {
			continue
		}
		hasExtra = true
		if len(values) == 0 {
			continue
		}
		key = strings.ToLower(key)
		if k, err := url.PathUnescape(key); err == nil {
			key = k
		}
		if u.Extra == nil {
			u.Extra = map[string][]string{}
		}
		u.Extra[key] = append(u.Extra[key], values...)
	}
	if u.Name == "" {
		if u.UID != "" || len(u.Groups) > 0 || hasExtra {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("requested &user.DefaultInfo{Name:%q, UID:%q, Groups:%#v, Extra:%#v} without impersonating a user name",
				u.Name, u.UID, u.Groups, u.Extra))
		}
		return nil, nil
	}
	h.Del(authenticationv1.ImpersonateUserHeader)
	h.Del(authenticationv1.ImpersonateUIDHeader)
	h.Del(authenticationv1.ImpersonateGroupHeader)
	for name := range h {
		if strings.HasPrefix(name, authenticationv1.ImpersonateUserExtraHeaderPrefix) {
			h.Del(name)
		}
	}
	return &u, nil
}

// auditUser is u as an audit event records an impersonated user.
func auditUser(u registry.UserInfo) authnv1.UserInfo {
	out := authnv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		out.Extra = make(map[string]authnv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			out.Extra[k] = v
		}
	}
	return out
}
