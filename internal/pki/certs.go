package pki

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// CA is a certificate authority that can sign serving certificates.
type CA struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM []byte
}

// EnsureCA loads dir/pki/ca.{crt,key}, creating them on first use.
func EnsureCA(dir string) (*CA, error) {
	return ensureCA(filepath.Join(dir, "pki", "ca.crt"), filepath.Join(dir, "pki", "ca.key"), "setpoint-ca")
}

// ensureCA loads the CA at certPath and keyPath, creating a self-signed
// one named cn on first use.
func ensureCA(certPath, keyPath, cn string) (*CA, error) {
	if ca, err := loadCA(certPath, keyPath); err == nil {
		return ca, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("load CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	if err := writePair(certPath, keyPath, der, key); err != nil {
		return nil, err
	}
	return loadCA(certPath, keyPath)
}

// LoadCA loads dir/pki/ca.{crt,key}, which must exist.
func LoadCA(dir string) (*CA, error) {
	ca, err := loadCA(filepath.Join(dir, "pki", "ca.crt"), filepath.Join(dir, "pki", "ca.key"))
	if err != nil {
		return nil, fmt.Errorf("load CA: %w", err)
	}
	return ca, nil
}

func loadCA(certPath, keyPath string) (*CA, error) {
	cert, certPEM, err := readCert(certPath)
	if err != nil {
		return nil, err
	}
	key, err := readKey(keyPath)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, CertPEM: certPEM}, nil
}

// EnsureServing returns the serving certificate for hosts (DNS names or IP
// addresses), issuing a new one when none exists, when it does not cover
// hosts, or when it expires within 30 days.
func (ca *CA) EnsureServing(dir string, hosts []string) (tls.Certificate, error) {
	certPath, keyPath := filepath.Join(dir, "pki", "serving.crt"), filepath.Join(dir, "pki", "serving.key")
	if cert, _, err := readCert(certPath); err == nil && covers(cert, hosts) &&
		time.Until(cert.NotAfter) > 30*24*time.Hour && cert.CheckSignatureFrom(ca.Cert) == nil {
		return tls.LoadX509KeyPair(certPath, keyPath)
	}
	der, key, err := ca.issueServing("setpoint-apiserver", hosts)
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := writePair(certPath, keyPath, der, key); err != nil {
		return tls.Certificate{}, err
	}
	return tls.LoadX509KeyPair(certPath, keyPath)
}

// IssueServing returns a new serving certificate (one year) for hosts
// (DNS names or IP addresses) with common name cn, and its key,
// PEM-encoded, without storing them: for servers the API server calls,
// such as a test's webhook server.
func (ca *CA) IssueServing(cn string, hosts []string) (certPEM, keyPEM []byte, err error) {
	der, key, err := ca.issueServing(cn, hosts)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("marshal key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

func (ca *CA) issueServing(cn string, hosts []string) ([]byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate serving key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("create serving certificate %s: %w", cn, err)
	}
	return der, key, nil
}

// Pool returns a cert pool holding the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

func covers(cert *x509.Certificate, hosts []string) bool {
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			if !slices.ContainsFunc(cert.IPAddresses, func(c net.IP) bool { return c.Equal(ip) }) {
				return false
			}
		} else if h != "" && !slices.Contains(cert.DNSNames, h) {
			return false
		}
	}
	return true
}

func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(fmt.Errorf("crypto/rand failed: %w", err))
	}
	return n
}

func readCert(path string) (*x509.Certificate, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, nil, fmt.Errorf("%s: no PEM certificate", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return cert, data, nil
}

func readKey(path string) (*ecdsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM key", path)
	}
	key, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return key, nil
}

func writePair(certPath, keyPath string, der []byte, key *ecdsa.PrivateKey) error {
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("marshal key: %w", err)
	}
	if err := writeFileAtomic(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	return writeFileAtomic(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

// writeFileAtomic writes data to path through a synced temporary file and a
// rename, so readers never see a partial file.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if existing, err := os.ReadFile(path); err == nil && bytes.Equal(existing, data) {
		return nil
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rename %s: %w", path, err)
	}
	return nil
}

// EnsureClient returns a client certificate for user cn in groups orgs
// (the Subject's Organization, as Kubernetes reads groups), stored as
// dir/pki/<file>.crt and .key, issuing a new one when none exists, when it
// names another user or groups, or when it expires within 30 days.
func (ca *CA) EnsureClient(dir, file, cn string, orgs []string) (tls.Certificate, error) {
	certPath, keyPath := filepath.Join(dir, "pki", file+".crt"), filepath.Join(dir, "pki", file+".key")
	if cert, _, err := readCert(certPath); err == nil && cert.Subject.CommonName == cn &&
		slices.Equal(cert.Subject.Organization, orgs) && time.Until(cert.NotAfter) > 30*24*time.Hour &&
		cert.CheckSignatureFrom(ca.Cert) == nil {
		return tls.LoadX509KeyPair(certPath, keyPath)
	}
	der, key, err := ca.issueClient(cn, orgs)
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := writePair(certPath, keyPath, der, key); err != nil {
		return tls.Certificate{}, err
	}
	return tls.LoadX509KeyPair(certPath, keyPath)
}

// IssueClient returns a new client certificate (one year) for user cn in
// groups orgs and its key, PEM-encoded, without storing them.
func (ca *CA) IssueClient(cn string, orgs []string) (certPEM, keyPEM []byte, err error) {
	der, key, err := ca.issueClient(cn, orgs)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("marshal key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

func (ca *CA) issueClient(cn string, orgs []string) ([]byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate client key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("create client certificate %s: %w", cn, err)
	}
	return der, key, nil
}

// EnsureServiceAccountKey returns the RSA key that signs service-account
// tokens, dir/pki/sa.key, creating it (2048 bits) on first use.
func EnsureServiceAccountKey(dir string) (*rsa.PrivateKey, error) {
	path := filepath.Join(dir, "pki", "sa.key")
	if b, err := os.ReadFile(path); err == nil {
		block, _ := pem.Decode(b)
		if block == nil {
			return nil, fmt.Errorf("service account key %s: no PEM block", path)
		}
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("service account key %s: %w", path, err)
		}
		return k, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read service account key: %w", err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generate service account key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := writeFileAtomic(path, pemBytes, 0o600); err != nil {
		return nil, err
	}
	return key, nil
}
