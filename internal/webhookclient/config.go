package webhookclient

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// DefaultServicePort is the port of a Service reference that names none.
const DefaultServicePort = 443

// ClientConfig names a webhook: URL, or Service, plus the CA bundle that
// verifies its serving certificate (empty: the system roots).
type ClientConfig struct {
	URL      string
	Service  *ServiceReference
	CABundle []byte
}

// ServiceReference is a webhook reached through a Service.
type ServiceReference struct {
	Namespace, Name, Path string
	// Port is the Service's port (0: 443).
	Port int32
}

// FromAdmission is the ClientConfig of an admission webhook.
func FromAdmission(c admissionregistrationv1.WebhookClientConfig) ClientConfig {
	out := ClientConfig{CABundle: c.CABundle}
	if c.URL != nil {
		out.URL = *c.URL
	}
	if s := c.Service; s != nil {
		out.Service = &ServiceReference{Namespace: s.Namespace, Name: s.Name, Path: deref(s.Path), Port: derefPort(s.Port)}
	}
	return out
}

// FromConversion is the ClientConfig of a CRD conversion webhook.
func FromConversion(c apiextensionsv1.WebhookClientConfig) ClientConfig {
	out := ClientConfig{CABundle: c.CABundle}
	if c.URL != nil {
		out.URL = *c.URL
	}
	if s := c.Service; s != nil {
		out.Service = &ServiceReference{Namespace: s.Namespace, Name: s.Name, Path: deref(s.Path), Port: derefPort(s.Port)}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefPort(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// ConfigError is a webhook client that cannot be built from its config.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// target is where a config sends its requests.
type target struct {
	// base is scheme://host:port plus the cleaned path, no query.
	base url.URL
	// serverName verifies the certificate.
	serverName string
	// service is set for a Service reference (its resolved port).
	service *ServiceReference
}

// resolveTarget reads cfg as kube's webhook client manager does.
func resolveTarget(cfg ClientConfig) (target, error) {
	if s := cfg.Service; s != nil {
		port := s.Port
		if port == 0 {
			port = DefaultServicePort
		}
		name := s.Name + "." + s.Namespace + ".svc"
		ref := *s
		ref.Port = port
		return target{
			base:       url.URL{Scheme: "https", Host: net.JoinHostPort(name, strconv.Itoa(int(port))), Path: cleanPath(s.Path)},
			serverName: name,
			service:    &ref,
		}, nil
	}
	if cfg.URL == "" {
		return target{}, &ConfigError{errors.New("webhook configuration must have either service or URL")}
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return target{}, &ConfigError{fmt.Errorf("Unparsable URL: %v", err)}
	}
	return target{
		base:       url.URL{Scheme: u.Scheme, Host: u.Host, Path: cleanPath(u.Path)},
		serverName: u.Hostname(),
	}, nil
}

// cleanPath is the path kube's REST client requests for an APIPath.
func cleanPath(p string) string {
	return path.Join("/", p)
}
