package serviceaccount

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Leeway is the clock skew kube-apiserver tolerates on a token's expiry,
// not-before and issued-at times, and on the deletion of the objects a
// token is bound to (go-jose's jwt.DefaultLeeway).
const Leeway = jwt.DefaultLeeway

// ErrNotServiceAccountToken is returned for tokens that are not JWTs of
// this issuer (bound or legacy), so that other authenticators may try them.
var ErrNotServiceAccountToken = errors.New("serviceaccount: not a service account token of this issuer")

// Token is a verified token.
type Token struct {
	ID string
	// Audiences are those of the token the verification asked for (the
	// intersection kube-apiserver reports).
	Audiences []string
	Expiry    time.Time
	// Claims are the kubernetes.io claims of a bound token; for a legacy
	// token, Namespace and ServiceAccount only.
	Claims Claims
	// Legacy is set for a legacy token (issuer kubernetes/serviceaccount)
	// and names its Secret.
	Legacy *LegacyClaims
}

// Verify checks raw as kube-apiserver's service-account authenticators
// do, in their order and with their error messages: the issuer (this
// issuer's or the legacy one, else ErrNotServiceAccountToken), the key id
// and signature, the audiences against audiences (the API server's when
// empty), then the validity window of a bound token (with Leeway) or the
// claims of a legacy one. Whether the objects it names still exist is the
// caller's check.
func (i *Issuer) Verify(raw string, now time.Time, audiences []string) (*Token, error) {
	v, err := i.signed(raw, now)
	if err != nil {
		return nil, err
	}
	tokenAuds := v.aud.Audience
	if len(tokenAuds) == 0 {
		tokenAuds = i.audiences // a legacy token is for the API server
	}
	if len(audiences) == 0 {
		audiences = i.audiences
	}
	var common []string
	for _, a := range tokenAuds {
		if slices.Contains(audiences, a) && !slices.Contains(common, a) {
			common = append(common, a)
		}
	}
	if len(common) == 0 {
		return nil, fmt.Errorf("token audiences %q is invalid for the target audiences %q", tokenAuds, audiences)
	}
	if v.legacyIssuer {
		legacy := v.legacy
		if err := legacy.validate(v.std.Subject); err != nil {
			return nil, err
		}
		return &Token{Audiences: common, Legacy: &legacy,
			Claims: Claims{Namespace: legacy.Namespace, ServiceAccount: Ref{Name: legacy.ServiceAccountName, UID: legacy.ServiceAccountUID}}}, nil
	}
	if err := validateTimes(v.std, now); err != nil {
		return nil, err
	}
	out := &Token{ID: v.std.ID, Audiences: common, Claims: v.priv.Kubernetes}
	if v.std.Expiry != nil {
		out.Expiry = v.std.Expiry.Time()
	}
	return out, nil
}

// signed returns the claims of raw once its issuer, key id and signature
// are checked: from the cache of signatures checked within
// signatureCacheTTL, else by checking them (an RSA verification, the
// expensive part of authenticating a request) and caching the result.
// Failures are not cached.
func (i *Issuer) signed(raw string, now time.Time) (*verified, error) {
	if v := i.checked.get(raw, now); v != nil {
		return v, nil
	}
	iss, ok := unverifiedIssuer(raw)
	if !ok || (iss != i.issuer && iss != LegacyIssuer) {
		return nil, ErrNotServiceAccountToken
	}
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return nil, ErrNotServiceAccountToken
	}
	for _, h := range tok.Headers {
		if h.KeyID != "" && h.KeyID != i.kid {
			return nil, errors.New("invalid signature, no keys found")
		}
	}
	v := &verified{legacyIssuer: iss == LegacyIssuer}
	if err := tok.Claims(&i.key.PublicKey, &v.std, &v.aud, &v.priv, &v.legacy); err != nil {
		return nil, err
	}
	i.checked.put(raw, v, now)
	return v, nil
}

// validateTimes checks exp, nbf and iat with Leeway, worded as
// kube-apiserver words them.
func validateTimes(std jwt.Claims, now time.Time) error {
	switch err := std.ValidateWithLeeway(jwt.Expected{Time: now}, Leeway); {
	case err == nil:
		return nil
	case errors.Is(err, jwt.ErrExpired):
		return errors.New("service account token has expired")
	case errors.Is(err, jwt.ErrNotValidYet):
		return errors.New("service account token is not valid yet")
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return errors.New("service account token is issued in the future")
	default:
		return errors.New("service account token claims could not be validated due to unexpected validation error")
	}
}

// unverifiedIssuer reads the iss claim of a compact JWT without verifying
// it, as kube-apiserver picks the authenticator of a token.
func unverifiedIssuer(raw string) (string, bool) {
	if strings.HasPrefix(strings.TrimSpace(raw), "{") {
		return "", false
	}
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return "", false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", false
	}
	var c struct {
		Issuer string `json:"iss"`
	}
	if json.Unmarshal(payload, &c) != nil {
		return "", false
	}
	return c.Issuer, true
}
