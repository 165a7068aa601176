package refcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// credentials are the files kube-apiserver and its clients need, created
// once per cluster directory and reused when a cluster starts again on it.
type credentials struct {
	caCert, caKey           string // the cluster CA: client CA and CSR signer
	servingCert, servingKey string // kube-apiserver's serving certificate, signed by the CA
	saKey, saPub            string // the service-account token signing key pair
	tokenFile               string // --token-auth-file
	adminToken              string
	controllerManagerToken  string
	schedulerToken          string
}

// Users of the token file. The admin is in system:masters (cluster-admin
// without any binding); the components authenticate as the users that
// Kubernetes' bootstrap RBAC policy grants their permissions to.
const (
	adminUser             = "admin"
	controllerManagerUser = "system:kube-controller-manager"
	schedulerUser         = "system:kube-scheduler"
)

// ensureCredentials loads the credentials under dir/pki, creating whatever
// is missing. The serving certificate is valid for loopback, the names of
// the kubernetes Service and its cluster IP, and advertise.
func ensureCredentials(dir, advertise string) (*credentials, error) {
	pki := filepath.Join(dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return nil, fmt.Errorf("refcluster: %w", err)
	}
	c := &credentials{
		caCert: filepath.Join(pki, "ca.crt"), caKey: filepath.Join(pki, "ca.key"),
		servingCert: filepath.Join(pki, "apiserver.crt"), servingKey: filepath.Join(pki, "apiserver.key"),
		saKey: filepath.Join(pki, "sa.key"), saPub: filepath.Join(pki, "sa.pub"),
		tokenFile: filepath.Join(pki, "tokens.csv"),
	}
	if !exists(c.caCert) || !exists(c.caKey) || !exists(c.servingCert) || !exists(c.servingKey) {
		if err := writeCertificates(c, advertise); err != nil {
			return nil, err
		}
	}
	if !exists(c.saKey) || !exists(c.saPub) {
		if err := writeServiceAccountKeys(c); err != nil {
			return nil, err
		}
	}
	if err := ensureTokens(c); err != nil {
		return nil, err
	}
	return c, nil
}

func writeCertificates(c *credentials, advertise string) error {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("refcluster: CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "refcluster-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("refcluster: CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return fmt.Errorf("refcluster: CA certificate: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("refcluster: serving key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP(kubernetesServiceIP)},
	}
	if ip := net.ParseIP(advertise); ip != nil {
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("refcluster: serving certificate: %w", err)
	}
	for _, f := range []struct {
		path  string
		block *pem.Block
	}{
		{c.caCert, &pem.Block{Type: "CERTIFICATE", Bytes: caDER}},
		{c.caKey, ecKeyBlock(caKey)},
		{c.servingCert, &pem.Block{Type: "CERTIFICATE", Bytes: der}},
		{c.servingKey, ecKeyBlock(key)},
	} {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(f.block), 0o600); err != nil {
			return fmt.Errorf("refcluster: %w", err)
		}
	}
	return nil
}

// writeServiceAccountKeys writes the RSA key pair that signs service
// account tokens (RS256, as kubeadm's sa.key).
func writeServiceAccountKeys(c *credentials) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("refcluster: service-account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("refcluster: service-account key: %w", err)
	}
	priv := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(c.saKey, priv, 0o600); err != nil {
		return fmt.Errorf("refcluster: %w", err)
	}
	if err := os.WriteFile(c.saPub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return fmt.Errorf("refcluster: %w", err)
	}
	return nil
}

// ensureTokens reads the static token file, writing one with fresh random
// tokens if it is missing. Its lines are token,user,uid,"groups".
func ensureTokens(c *credentials) error {
	if !exists(c.tokenFile) {
		lines := ""
		for _, u := range []struct{ user, groups string }{
			{adminUser, "system:masters"},
			{controllerManagerUser, ""},
			{schedulerUser, ""},
		} {
			lines += fmt.Sprintf("%s,%s,%s,%q\n", randomToken(), u.user, u.user, u.groups)
		}
		if err := os.WriteFile(c.tokenFile, []byte(lines), 0o600); err != nil {
			return fmt.Errorf("refcluster: %w", err)
		}
	}
	b, err := os.ReadFile(c.tokenFile)
	if err != nil {
		return fmt.Errorf("refcluster: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.SplitN(line, ",", 3)
		if len(fields) < 2 {
			continue
		}
		switch token, user := fields[0], fields[1]; user {
		case adminUser:
			c.adminToken = token
		case controllerManagerUser:
			c.controllerManagerToken = token
		case schedulerUser:
			c.schedulerToken = token
		}
	}
	if c.adminToken == "" || c.controllerManagerToken == "" || c.schedulerToken == "" {
		return fmt.Errorf("refcluster: %s lacks a token of %s, %s or %s", c.tokenFile, adminUser, controllerManagerUser, schedulerUser)
	}
	return nil
}

func ecKeyBlock(k *ecdsa.PrivateKey) *pem.Block {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		panic(err) // a P-256 key always marshals
	}
	return &pem.Block{Type: "EC PRIVATE KEY", Bytes: der}
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
