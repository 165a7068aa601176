package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// server is how to reach the cluster: its URL, CA and the admin's token.
type server struct {
	url, caFile, admin string
}

// identity is a client with a bearer token and a connection of its own, as
// separate clients have.
type identity struct {
	s      *server
	client *http.Client
	token  string
}

func (s *server) identity(token string) (identity, error) {
	tr, err := transport(s.caFile)
	if err != nil {
		return identity{}, err
	}
	return identity{s: s, client: &http.Client{Transport: tr}, token: token}, nil
}

// transport is an HTTP/2 transport trusting the CA in caFile.
func transport(caFile string) (*http.Transport, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("apfflood: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("apfflood: no CA certificate in " + caFile)
	}
	return &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, ForceAttemptHTTP2: true}, nil
}

func (id identity) do(method, path, body string) (int, string, error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, id.s.url+path, r)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+id.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := id.client.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// want sends a request and fails unless it is answered with code.
func (id identity) want(code int, method, path, body string) (string, error) {
	got, out, err := id.do(method, path, body)
	if err != nil {
		return "", err
	}
	if got != code {
		return "", fmt.Errorf("%s %s: %d %s", method, path, got, out)
	}
	return out, nil
}

// setup makes the flooding ServiceAccount (with 20 ConfigMaps to list),
// the second tenant's ServiceAccount and a leader-election Lease renewed
// by a kube-system ServiceAccount (matched by system-leader-election), as
// the setpoint benchmark does.
func setup(s *server) (flooder, tenant, elector identity, err error) {
	admin, err := s.identity(s.admin)
	if err != nil {
		return
	}
	if flooder, err = serviceAccount(admin, "flood", "flooder"); err != nil {
		return
	}
	if tenant, err = serviceAccount(admin, "tenant", "app"); err != nil {
		return
	}
	if elector, err = serviceAccount(admin, "kube-system", "elector"); err != nil {
		return
	}
	for i := range 20 {
		if _, err = admin.want(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/flood/configmaps",
			fmt.Sprintf(`{"metadata":{"name":"cm-%d"},"data":{"k":"%0200d"}}`, i, i)); err != nil {
			return
		}
	}
	if _, err = admin.want(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/tenant/configmaps",
		`{"metadata":{"name":"own"},"data":{"k":"v"}}`); err != nil {
		return
	}
	_, err = admin.want(http.StatusCreated, http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
		`{"metadata":{"name":"flood-test"},"spec":{"holderIdentity":"elector","leaseDurationSeconds":15}}`)
	return
}

// serviceAccount creates namespace ns (if needed) and ServiceAccount name
// in it, bound to cluster-admin in its namespace, and returns an identity
// with a token from the TokenRequest API.
func serviceAccount(admin identity, ns, name string) (identity, error) {
	if code, out, err := admin.do(http.MethodPost, "/api/v1/namespaces", fmt.Sprintf(`{"metadata":{"name":%q}}`, ns)); err != nil {
		return identity{}, err
	} else if code != http.StatusCreated && code != http.StatusConflict {
		return identity{}, fmt.Errorf("create namespace %s: %d %s", ns, code, out)
	}
	if _, err := admin.want(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/"+ns+"/serviceaccounts",
		fmt.Sprintf(`{"metadata":{"name":%q}}`, name)); err != nil {
		return identity{}, err
	}
	if _, err := admin.want(http.StatusCreated, http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/rolebindings",
		fmt.Sprintf(`{"metadata":{"name":%q},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},
		"subjects":[{"kind":"ServiceAccount","name":%q,"namespace":%q}]}`, name, name, ns)); err != nil {
		return identity{}, err
	}
	out, err := admin.want(http.StatusCreated, http.MethodPost, "/api/v1/namespaces/"+ns+"/serviceaccounts/"+name+"/token",
		`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":3600}}`)
	if err != nil {
		return identity{}, err
	}
	var tr struct {
		Status struct{ Token string } `json:"status"`
	}
	if err := json.Unmarshal([]byte(out), &tr); err != nil || tr.Status.Token == "" {
		return identity{}, fmt.Errorf("token request answer %s: %v", out, err)
	}
	return admin.s.identity(tr.Status.Token)
}

// renew is one leader-election renewal: read the Lease, write it back
// with a new renewTime.
func renew(elector identity) (int, error) {
	code, body, err := elector.do(http.MethodGet, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/flood-test", "")
	if err != nil || code != http.StatusOK {
		return code, err
	}
	rv := between(body, `"resourceVersion":"`, `"`)
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
	code, _, err = elector.do(http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/flood-test",
		fmt.Sprintf(`{"metadata":{"name":"flood-test","resourceVersion":%q},"spec":{"holderIdentity":"elector","leaseDurationSeconds":15,"renewTime":%q}}`, rv, now))
	return code, err
}

func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	v, _, _ := strings.Cut(rest, to)
	return v
}
