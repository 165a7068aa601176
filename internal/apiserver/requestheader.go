package apiserver

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// RequestHeaderConfig is kube-apiserver's front-proxy authentication
// (--requestheader-* flags): a request presenting a client certificate
// signed by ClientCAFile, whose CommonName is one of AllowedNames (any
// when empty), runs as the user its headers name.
type RequestHeaderConfig struct {
	// ClientCAFile is the PEM bundle of the front-proxy CA
	// (--requestheader-client-ca-file); empty turns the authentication
	// off.
	ClientCAFile string
	// AllowedNames (--requestheader-allowed-names).
	AllowedNames []string
	// UsernameHeaders, UIDHeaders, GroupHeaders and ExtraHeaderPrefixes
	// (--requestheader-username-headers, -uid-headers, -group-headers,
	// -extra-headers-prefix): the user is the first non-empty username
	// header, its groups every value of the group headers, its extra
	// values the headers with a prefix (the rest of the name, lowercased
	// and unescaped, is the key).
	UsernameHeaders, UIDHeaders, GroupHeaders, ExtraHeaderPrefixes []string
}

// DefaultRequestHeaderConfig is what kubeadm configures (and `setpoint up`
// uses) for a front-proxy CA file.
func DefaultRequestHeaderConfig(caFile string, allowedNames ...string) RequestHeaderConfig {
	return RequestHeaderConfig{
		ClientCAFile: caFile, AllowedNames: allowedNames,
		UsernameHeaders: []string{"X-Remote-User"}, GroupHeaders: []string{"X-Remote-Group"},
		ExtraHeaderPrefixes: []string{"X-Remote-Extra-"},
	}
}

// requestHeaderAuthenticator authenticates front-proxy requests.
type requestHeaderAuthenticator struct {
	cfg   RequestHeaderConfig
	caPEM []byte
	pool  *x509.CertPool
}

func newRequestHeaderAuthenticator(cfg RequestHeaderConfig) (*requestHeaderAuthenticator, error) {
	if cfg.ClientCAFile == "" {
		return nil, nil
	}
	caPEM, err := os.ReadFile(cfg.ClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("requestheader client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("requestheader client CA %s: no certificate found", cfg.ClientCAFile)
	}
	return &requestHeaderAuthenticator{cfg: cfg, caPEM: caPEM, pool: pool}, nil
}

// authenticate returns the user the headers name when the request's
// client certificate is a trusted front proxy's; ok is false otherwise
// (other authenticators are asked then, as in kube-apiserver's union).
// The headers it read are removed from the request.
func (a *requestHeaderAuthenticator) authenticate(r *http.Request) (registry.UserInfo, bool) {
	if a == nil || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return registry.UserInfo{}, false
	}
	leaf := r.TLS.PeerCertificates[0]
	inter := x509.NewCertPool()
	for _, c := range r.TLS.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: a.pool, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return registry.UserInfo{}, false
	}
	if len(a.cfg.AllowedNames) > 0 && !slices.Contains(a.cfg.AllowedNames, leaf.Subject.CommonName) {
		return registry.UserInfo{}, false
	}
	name := firstHeader(r.Header, a.cfg.UsernameHeaders)
	if name == "" {
		return registry.UserInfo{}, false
	}
	u := registry.UserInfo{Name: name, UID: firstHeader(r.Header, a.cfg.UIDHeaders)}
	for _, h := range a.cfg.GroupHeaders {
		u.Groups = append(u.Groups, r.Header.Values(h)...)
	}
	for k, vs := range r.Header {
		for _, prefix := range a.cfg.ExtraHeaderPrefixes {
			if rest, ok := cutPrefixFold(k, prefix); ok {
				key := strings.ToLower(rest)
				if unescaped, err := url.PathUnescape(key); err == nil {
					key = unescaped
				}
				if u.Extra == nil {
					u.Extra = map[string][]string{}
				}
				u.Extra[key] = append(u.Extra[key], vs...)
			}
		}
	}
	if !slices.Contains(u.Groups, "system:authenticated") {
		u.Groups = append(u.Groups, "system:authenticated")
	}
	a.clear(r.Header)
	return u, true
}

func (a *requestHeaderAuthenticator) clear(h http.Header) {
	for _, names := range [][]string{a.cfg.UsernameHeaders, a.cfg.UIDHeaders, a.cfg.GroupHeaders} {
		for _, n := range names {
			h.Del(n)
		}
	}
	for k := range h {
		for _, prefix := range a.cfg.ExtraHeaderPrefixes {
			if _, ok := cutPrefixFold(k, prefix); ok {
				delete(h, k)
			}
		}
	}
}

func firstHeader(h http.Header, names []string) string {
	for _, n := range names {
		if v := strings.TrimSpace(h.Get(n)); v != "" {
			return v
		}
	}
	return ""
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return "", false
	}
	return s[len(prefix):], true
}

// clientCAs are the CAs whose client certificates the TLS handshake
// accepts: the cluster CA's (users) and the front proxy's.
func (s *Server) clientCAs() *x509.CertPool {
	pool := s.ca.Pool()
	if s.requestHeader != nil {
		pool.AppendCertsFromPEM(s.requestHeader.caPEM)
	}
	return pool
}

// signedByClusterCA reports whether a verified chain ends at the cluster
// CA (a front proxy's certificate is no user of its own).
func (s *Server) signedByClusterCA(chain []*x509.Certificate) bool {
	return len(chain) > 0 && chain[len(chain)-1].Equal(s.ca.Cert)
}

// authConfigMap is where kube-apiserver publishes how it authenticates
// clients, for aggregated API servers (and webhooks) to trust it.
const authConfigMapNamespace, authConfigMapName = "kube-system", "extension-apiserver-authentication"

// ensureAuthenticationConfigMap writes the client CA and the requestheader
// settings into kube-system/extension-apiserver-authentication, merged
// with what other API servers of the cluster wrote there (their CAs and
// names are kept), as kube-apiserver's cluster authentication trust
// controller does.
func (s *Server) ensureAuthenticationConfigMap(ctx context.Context) error {
	objs := s.env().Objects(corev1.SchemeGroupVersion.WithResource("configmaps"))
	if objs == nil {
		return nil
	}
	want := s.authenticationData()
	_, err := objs.Get(ctx, authConfigMapNamespace, authConfigMapName)
	if apierrors.IsNotFound(err) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: authConfigMapNamespace, Name: authConfigMapName}, Data: want}
		if _, err = objs.Create(ctx, authConfigMapNamespace, cm, false); !apierrors.IsAlreadyExists(err) {
			return wrapAuthConfigMap(err)
		}
	} else if err != nil {
		return wrapAuthConfigMap(err)
	}
	_, err = objs.Update(ctx, authConfigMapNamespace, authConfigMapName, func(o runtime.Object) (runtime.Object, error) {
		cm := o.(*corev1.ConfigMap)
		cm.Data = mergeAuthenticationData(cm.Data, want)
		return cm, nil
	}, false)
	return wrapAuthConfigMap(err)
}

func wrapAuthConfigMap(err error) error {
	if err != nil {
		return fmt.Errorf("%s/%s: %w", authConfigMapNamespace, authConfigMapName, err)
	}
	return nil
}

// authenticationData is this server's part of the ConfigMap.
func (s *Server) authenticationData() map[string]string {
	data := map[string]string{"client-ca-file": string(s.ca.CertPEM)}
	rh := s.requestHeader
	if rh == nil {
		return data
	}
	data["requestheader-client-ca-file"] = string(rh.caPEM)
	data["requestheader-username-headers"] = jsonList(rh.cfg.UsernameHeaders)
	if len(rh.cfg.UIDHeaders) > 0 {
		data["requestheader-uid-headers"] = jsonList(rh.cfg.UIDHeaders)
	}
	data["requestheader-group-headers"] = jsonList(rh.cfg.GroupHeaders)
	data["requestheader-extra-headers-prefix"] = jsonList(rh.cfg.ExtraHeaderPrefixes)
	data["requestheader-allowed-names"] = jsonList(rh.cfg.AllowedNames)
	return data
}

// mergeAuthenticationData combines the stored data with this server's:
// CA bundles gain the certificates they lack, lists the names they lack.
func mergeAuthenticationData(have, want map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range have {
		out[k] = v
	}
	for k, v := range want {
		old, ok := out[k]
		switch {
		case !ok:
			out[k] = v
		case strings.HasSuffix(k, "-ca-file"):
			if !strings.Contains(old, strings.TrimSpace(v)) {
				out[k] = strings.TrimRight(old, "\n") + "\n" + v
			}
		default:
			var a, b []string
			if json.Unmarshal([]byte(old), &a) != nil || json.Unmarshal([]byte(v), &b) != nil {
				out[k] = v
				continue
			}
			for _, x := range b {
				if !slices.Contains(a, x) {
					a = append(a, x)
				}
			}
			out[k] = jsonList(a)
		}
	}
	return out
}

func jsonList(v []string) string {
	if v == nil {
		v = []string{}
	}
	b, _ := json.Marshal(v) // a string slice always encodes
	return string(b)
}
