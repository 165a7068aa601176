package serviceaccount

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-jose/go-jose/v4/jwt"
	"k8s.io/apimachinery/pkg/api/validation"
)

// LegacyIssuer is the issuer of the tokens kept in Secrets of type
// kubernetes.io/service-account-token.
const LegacyIssuer = "kubernetes/serviceaccount"

// LastUsedLabel is the label kube-apiserver stamps on a token Secret with
// the day (UTC, YYYY-MM-DD) its token was last used.
const LastUsedLabel = "kubernetes.io/legacy-token-last-used"

// InvalidSinceLabel marks a token Secret whose token no longer
// authenticates (kube's legacy token cleaner sets it).
const InvalidSinceLabel = "kubernetes.io/legacy-token-invalid-since"

// LegacyClaims are the private claims of a legacy token.
type LegacyClaims struct {
	Namespace          string `json:"kubernetes.io/serviceaccount/namespace"`
	SecretName         string `json:"kubernetes.io/serviceaccount/secret.name"`
	ServiceAccountName string `json:"kubernetes.io/serviceaccount/service-account.name"`
	ServiceAccountUID  string `json:"kubernetes.io/serviceaccount/service-account.uid"`
}

// IssueLegacy signs the never-expiring token of a token Secret: issuer
// kubernetes/serviceaccount, no audience, the subject and the claims
// naming the service account and the Secret.
func (i *Issuer) IssueLegacy(c LegacyClaims) (string, error) {
	std := jwt.Claims{Issuer: LegacyIssuer, Subject: UserName(c.Namespace, c.ServiceAccountName)}
	tok, err := jwt.Signed(i.signer).Claims(std).Claims(c).Serialize()
	if err != nil {
		return "", fmt.Errorf("serviceaccount: sign legacy token: %w", err)
	}
	return tok, nil
}

// validate checks the claims of a legacy token with kube's messages.
func (c LegacyClaims) validate(subject string) error {
	switch {
	case subject == "":
		return errors.New("sub claim is missing")
	case c.Namespace == "":
		return errors.New("namespace claim is missing")
	case c.SecretName == "":
		return errors.New("secretName claim is missing")
	case c.ServiceAccountName == "":
		return errors.New("serviceAccountName claim is missing")
	case c.ServiceAccountUID == "":
		return errors.New("serviceAccountUID claim is missing")
	}
	ns, name, ok := SplitUserName(subject)
	if !ok || ns != c.Namespace || name != c.ServiceAccountName {
		return errors.New("sub claim is invalid")
	}
	return nil
}

// SplitUserName splits system:serviceaccount:<namespace>:<name>; ok is
// false for any other user name, as Kubernetes' serviceaccount.SplitUsername.
func SplitUserName(user string) (namespace, name string, ok bool) {
	rest, found := strings.CutPrefix(user, Prefix)
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 2 || len(validation.ValidateNamespaceName(parts[0], false)) != 0 ||
		len(validation.ValidateServiceAccountName(parts[1], false)) != 0 {
		return "", "", false
	}
	return parts[0], parts[1], true
}
