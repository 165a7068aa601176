package serviceaccount

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"slices"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// DefaultIssuer is kube-apiserver's issuer in kubeadm clusters, and the
// default audience of tokens.
const DefaultIssuer = "https://kubernetes.default.svc.cluster.local"

// Prefix is what every service-account user name starts with.
const Prefix = "system:serviceaccount:"

// Ref names an object a token is bound to.
type Ref struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// Claims are the private claims under "kubernetes.io".
type Claims struct {
	Namespace      string `json:"namespace"`
	Node           *Ref   `json:"node,omitempty"`
	Pod            *Ref   `json:"pod,omitempty"`
	Secret         *Ref   `json:"secret,omitempty"`
	ServiceAccount Ref    `json:"serviceaccount"`
	// WarnAfter is set on tokens whose lifetime was extended.
	WarnAfter *jwt.NumericDate `json:"warnafter,omitempty"`
}

type privateClaims struct {
	Kubernetes Claims `json:"kubernetes.io"`
}

// audienceClaim carries "aud" as kube-apiserver writes it: always an
// array, even of one audience (go-jose's jwt.Audience writes one audience
// as a string, which JWT allows but clients comparing with Kubernetes'
// tokens do not expect).
type audienceClaim struct {
	Audience []string `json:"aud,omitempty"`
}

// UserName is the user a service account authenticates as.
func UserName(namespace, name string) string { return Prefix + namespace + ":" + name }

// Issuer signs and verifies tokens with one key.
type Issuer struct {
	key       *rsa.PrivateKey
	kid       string
	signer    jose.Signer
	issuer    string
	audiences []string
	// checked caches the tokens whose signature was checked recently.
	checked signatureCache
}

// NewIssuer returns an Issuer signing with key as issuer; audiences are the
// API server's own (the default audiences of issued tokens, and those
// Verify accepts).
func NewIssuer(key *rsa.PrivateKey, issuer string, audiences []string) (*Issuer, error) {
	kid, err := KeyID(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, nil)
	if err != nil {
		return nil, fmt.Errorf("serviceaccount: signer: %w", err)
	}
	return &Issuer{key: key, kid: kid, signer: signer, issuer: issuer, audiences: slices.Clone(audiences)}, nil
}

// KeyID is Kubernetes' kid of a public key.
func KeyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("serviceaccount: key id: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// Audiences returns the API server's audiences.
func (i *Issuer) Audiences() []string { return slices.Clone(i.audiences) }

// Issue signs a token for claims, valid from now for ttl, for audiences.
func (i *Issuer) Issue(c Claims, audiences []string, now time.Time, ttl time.Duration) (string, time.Time, error) {
	exp := now.Add(ttl)
	std := jwt.Claims{
		Issuer: i.issuer, Subject: UserName(c.Namespace, c.ServiceAccount.Name),
		Expiry: jwt.NewNumericDate(exp), IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now),
		ID: string(uuid.NewUUID()),
	}
	tok, err := jwt.Signed(i.signer).Claims(std).Claims(audienceClaim{slices.Clone(audiences)}).Claims(privateClaims{c}).Serialize()
	if err != nil {
		return "", time.Time{}, fmt.Errorf("serviceaccount: sign: %w", err)
	}
	return tok, exp.Truncate(time.Second), nil
}

// Name is the issuer (the iss claim of bound tokens).
func (i *Issuer) Name() string { return i.issuer }

// KeySet is the JSON Web Key Set that verifies the issuer's tokens, as
// kube-apiserver publishes it at /openid/v1/jwks: each public key with use
// "sig", its kid and algorithm.
func (i *Issuer) KeySet() jose.JSONWebKeySet {
	return jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{
		Key: &i.key.PublicKey, KeyID: i.kid, Algorithm: string(jose.RS256), Use: "sig",
	}}}
}
