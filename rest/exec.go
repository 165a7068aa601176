package rest

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"golang.org/x/term"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
)

// Interactive modes of an exec credential plugin (kubeconfig
// users[].user.exec.interactiveMode).
const (
	ExecInteractiveNever       = "Never"
	ExecInteractiveIfAvailable = "IfAvailable"
	ExecInteractiveAlways      = "Always"
)

// ExecConfig runs a credential plugin for the client's token or client
// certificate, as kubeconfig's users[].user.exec and client-go's exec
// authenticator: the plugin receives an ExecCredential of APIVersion
// (client.authentication.k8s.io/v1 or v1beta1) in the KUBERNETES_EXEC_INFO
// environment variable, with the cluster when ProvideClusterInfo, and
// prints an ExecCredential whose status holds a token and/or a PEM client
// certificate and key, valid until status.expirationTimestamp (forever
// when absent). The client runs it on first use, again once the
// credentials expire, and after the server answered 401 to them.
type ExecConfig struct {
	Command string
	Args    []string
	// Env is added to the client's own environment.
	Env        []ExecEnvVar
	APIVersion string
	// InstallHint is printed when Command cannot be found.
	InstallHint        string
	ProvideClusterInfo bool
	// Config is the cluster's client.authentication.k8s.io/exec extension,
	// passed in spec.cluster.config.
	Config json.RawMessage
	// InteractiveMode is Never, IfAvailable or Always; the plugin gets the
	// terminal's standard input when interactive. v1 requires it;
	// v1beta1 defaults to IfAvailable.
	InteractiveMode string
}

// ExecEnvVar is one environment variable of an exec plugin.
type ExecEnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// execCluster is client.authentication.k8s.io's Cluster.
type execCluster struct {
	Server                   string          `json:"server"`
	TLSServerName            string          `json:"tls-server-name,omitempty"`
	InsecureSkipTLSVerify    bool            `json:"insecure-skip-tls-verify,omitempty"`
	CertificateAuthorityData []byte          `json:"certificate-authority-data,omitempty"`
	Config                   json.RawMessage `json:"config,omitempty"`
}

// execCredential is client.authentication.k8s.io's ExecCredential.
type execCredential struct {
	metav1.TypeMeta `json:",inline"`
	Spec            struct {
		Cluster     *execCluster `json:"cluster,omitempty"`
		Interactive bool         `json:"interactive"`
	} `json:"spec"`
	Status *struct {
		ExpirationTimestamp   *metav1.Time `json:"expirationTimestamp,omitempty"`
		Token                 string       `json:"token,omitempty"`
		ClientCertificateData string       `json:"clientCertificateData,omitempty"`
		ClientKeyData         string       `json:"clientKeyData,omitempty"`
	} `json:"status,omitempty"`
}

// installHelp follows the first "not found" error of a plugin, as
// client-go words it.
const installHelp = `

It looks like you are trying to use a client-go credential plugin that is not installed.

To learn more about this feature, consult the documentation available at:
      https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins`

var execAPIVersions = []string{"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"}

// execCreds are the credentials of an exec plugin, cached until they
// expire.
type execCreds struct {
	cfg     ExecConfig
	cluster *execCluster
	clock   clock.PassiveClock
	// onCertChange closes the connections made with an older certificate.
	onCertChange func()

	// hintOnce adds the install help to the first not-found error only,
	// as client-go does.
	hintOnce sync.Once

	mu     sync.Mutex
	cur    *execResult
	expiry time.Time
}

type execResult struct {
	token string
	cert  *tls.Certificate
}

func newExecCredentials(cfg *Config, clk clock.PassiveClock) (*execCreds, error) {
	ec := *cfg.ExecProvider
	if !slices.Contains(execAPIVersions, ec.APIVersion) {
		return nil, fmt.Errorf("exec plugin: invalid apiVersion %q", ec.APIVersion)
	}
	if ec.InteractiveMode == "" && ec.APIVersion != execAPIVersions[0] {
		ec.InteractiveMode = ExecInteractiveIfAvailable
	}
	switch ec.InteractiveMode {
	case ExecInteractiveNever, ExecInteractiveIfAvailable, ExecInteractiveAlways:
	case "":
		return nil, fmt.Errorf("exec plugin: interactiveMode must be specified for %s to use exec authentication plugin", ec.Command)
	default:
		return nil, fmt.Errorf("exec plugin: invalid interactiveMode %q", ec.InteractiveMode)
	}
	e := &execCreds{cfg: ec, clock: clk}
	if ec.ProvideClusterInfo {
		ca, err := dataOrFile(cfg.TLS.CAData, cfg.TLS.CAFile)
		if err != nil {
			return nil, fmt.Errorf("exec plugin: certificate authority: %w", err)
		}
		e.cluster = &execCluster{Server: cfg.Host, TLSServerName: cfg.TLS.ServerName, InsecureSkipTLSVerify: cfg.TLS.Insecure,
			CertificateAuthorityData: ca, Config: ec.Config}
	}
	return e, nil
}

// get returns the cached credentials, running the plugin when there are
// none or they expired.
func (e *execCreds) get() (*execResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cur != nil && (e.expiry.IsZero() || !e.clock.Now().After(e.expiry)) {
		return e.cur, nil
	}
	if err := e.runLocked(); err != nil {
		return nil, err
	}
	return e.cur, nil
}

func (e *execCreds) apply(req *http.Request) (any, error) {
	r, err := e.get()
	if err != nil {
		return nil, fmt.Errorf("getting credentials: %w", err)
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	return r, nil
}

// refresh runs the plugin again unless the credentials changed since used
// was handed out.
func (e *execCreds) refresh(used any) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := used.(*execResult); !ok || r != e.cur {
		return true
	}
	return e.runLocked() == nil
}

// clientCertificate is the TLS client certificate callback: the plugin's
// certificate, or none.
func (e *execCreds) clientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	r, err := e.get()
	if err != nil {
		return nil, err
	}
	if r.cert == nil {
		return &tls.Certificate{}, nil
	}
	return r.cert, nil
}

// interactive decides whether the plugin gets standard input.
func (e *execCreds) interactive() (bool, error) {
	tty := term.IsTerminal(int(os.Stdin.Fd()))
	switch e.cfg.InteractiveMode {
	case ExecInteractiveAlways:
		if !tty {
			return false, errors.New("standard input is not a terminal")
		}
		return true, nil
	case ExecInteractiveIfAvailable:
		return tty, nil
	}
	return false, nil
}

// runLocked runs the plugin and keeps what it returned; e.mu is held.
func (e *execCreds) runLocked() error {
	interactive, err := e.interactive()
	if err != nil {
		return fmt.Errorf("exec plugin cannot support interactive mode: %w", err)
	}
	var in execCredential
	in.APIVersion, in.Kind = e.cfg.APIVersion, "ExecCredential"
	in.Spec.Interactive, in.Spec.Cluster = interactive, e.cluster
	info, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encode ExecCredentials: %w", err)
	}
	cmd := exec.Command(e.cfg.Command, e.cfg.Args...)
	cmd.Env = os.Environ()
	for _, v := range e.cfg.Env {
		cmd.Env = append(cmd.Env, v.Name+"="+v.Value)
	}
	cmd.Env = append(cmd.Env, "KUBERNETES_EXEC_INFO="+string(info)+"\n")
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	if interactive {
		cmd.Stdin = os.Stdin
	}
	if err := cmd.Run(); err != nil {
		return e.runError(err)
	}
	var out execCredential
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return fmt.Errorf("decoding stdout: %w", err)
	}
	return e.keepLocked(out)
}

func (e *execCreds) runError(err error) error {
	var notFound *exec.Error
	var exit *exec.ExitError
	switch {
	case errors.As(err, &notFound):
		msg := fmt.Sprintf("exec: executable %s not found", e.cfg.Command)
		e.hintOnce.Do(func() {
			msg += installHelp
			if e.cfg.InstallHint != "" {
				msg += "\n\n" + e.cfg.InstallHint
			}
		})
		return errors.New(msg)
	case errors.As(err, &exit):
		return fmt.Errorf("exec: executable %s failed with exit code %d", e.cfg.Command, exit.ExitCode())
	}
	return fmt.Errorf("exec: %w", err)
}

// keepLocked validates the plugin's answer as client-go does and caches
// it; a new certificate closes the connections made with the old one.
func (e *execCreds) keepLocked(out execCredential) error {
	if out.APIVersion != e.cfg.APIVersion {
		return fmt.Errorf("exec plugin is configured to use API version %s, plugin returned version %s", e.cfg.APIVersion, out.APIVersion)
	}
	st := out.Status
	switch {
	case st == nil:
		return errors.New("exec plugin didn't return a status field")
	case st.Token == "" && st.ClientCertificateData == "" && st.ClientKeyData == "":
		return errors.New("exec plugin didn't return a token or cert/key pair")
	case (st.ClientCertificateData == "") != (st.ClientKeyData == ""):
		return errors.New("exec plugin returned only certificate or key, not both")
	}
	r := &execResult{token: st.Token}
	if st.ClientCertificateData != "" {
		cert, err := tls.X509KeyPair([]byte(st.ClientCertificateData), []byte(st.ClientKeyData))
		if err != nil {
			return fmt.Errorf("failed parsing client key/certificate: %w", err)
		}
		r.cert = &cert
	}
	e.expiry = time.Time{}
	if st.ExpirationTimestamp != nil {
		e.expiry = st.ExpirationTimestamp.Time
	}
	old := e.cur
	e.cur = r
	if old != nil && old.cert != nil && (r.cert == nil || !slices.EqualFunc(old.cert.Certificate, r.cert.Certificate, bytes.Equal)) && e.onCertChange != nil {
		e.onCertChange()
	}
	return nil
}
