package serviceaccounttoken_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/ctrltest"
	"github.com/setpoint-dev/setpoint/internal/controllers/serviceaccounttoken"
	"github.com/setpoint-dev/setpoint/internal/pki"
	"github.com/setpoint-dev/setpoint/internal/serviceaccount"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ns = "default"

func start(t *testing.T) *ctrltest.Env {
	return ctrltest.Start(t, func(e *ctrltest.Env) error {
		key, err := pki.EnsureServiceAccountKey(e.Server.DataDir)
		if err != nil {
			return err
		}
		signer, err := serviceaccount.NewIssuer(key, serviceaccount.DefaultIssuer, []string{serviceaccount.DefaultIssuer})
		if err != nil {
			return err
		}
		return serviceaccounttoken.Add(e.Mgr, serviceaccounttoken.Options{Signer: signer, RootCA: e.ClusterCA()})
	})
}

// review asks the server who token authenticates as (a TokenReview).
func review(t *testing.T, env *ctrltest.Env, token string) authenticationv1.TokenReviewStatus {
	t.Helper()
	trs := rest.For[*authenticationv1.TokenReview, *metav1.List](env.Client, authenticationv1.SchemeGroupVersion.WithResource("tokenreviews"), false)
	r, err := trs.Create(context.Background(), &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Status
}

// TestLegacyTokenSecret: a token Secret a user asks for is filled as
// kube-controller-manager fills it, its token authenticates as the
// ServiceAccount and stamps the Secret's last-used label; the token stops
// working when the Secret changes or the ServiceAccount goes, which also
// removes the Secret; a Secret naming no ServiceAccount is removed; no
// Secret is created unasked.
func TestLegacyTokenSecret(t *testing.T) {
	env := start(t)
	ctx := context.Background()
	sas := rest.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](env.Client, corev1.SchemeGroupVersion.WithResource("serviceaccounts"), true).Namespace(ns)
	secrets := rest.For[*corev1.Secret, *corev1.SecretList](env.Client, corev1.SchemeGroupVersion.WithResource("secrets"), true).Namespace(ns)
	sa, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bot"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tokenSecret := func(name, saName string) {
		t.Helper()
		_, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: saName}}, Type: corev1.SecretTypeServiceAccountToken}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	tokenSecret("bot-token", "bot")
	var filled *corev1.Secret
	env.Eventually("token secret filled", func() error {
		s, err := secrets.Get(ctx, "bot-token", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(s.Data[corev1.ServiceAccountTokenKey]) == 0 {
			return errors.New("no token yet")
		}
		filled = s
		return nil
	})
	if !bytes.Equal(filled.Data[corev1.ServiceAccountRootCAKey], env.ClusterCA()) || string(filled.Data[corev1.ServiceAccountNamespaceKey]) != ns ||
		filled.Annotations[corev1.ServiceAccountUIDKey] != string(sa.UID) {
		t.Fatalf("secret %+v", filled)
	}
	token := string(filled.Data[corev1.ServiceAccountTokenKey])
	st := review(t, env, token)
	u := st.User
	if !st.Authenticated || u.Username != "system:serviceaccount:default:bot" || u.UID != string(sa.UID) || len(u.Extra) != 0 ||
		fmt.Sprint(u.Groups) != "[system:serviceaccounts system:serviceaccounts:default system:authenticated]" {
		t.Fatalf("legacy token: %+v", st)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	env.Eventually("last-used label", func() error {
		s, err := secrets.Get(ctx, "bot-token", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if v := s.Labels[serviceaccount.LastUsedLabel]; v != today && v != tomorrow {
			return fmt.Errorf("labels %v", s.Labels)
		}
		return nil
	})

	// No Secret was created unasked.
	list, err := secrets.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("secrets: %d, %v", len(list.Items), err)
	}

	// A Secret for a ServiceAccount that does not exist is removed.
	tokenSecret("orphan-token", "nobody")
	env.Eventually("orphan token secret removed", gone(ctx, secrets, "orphan-token"))

	// The ServiceAccount goes: its token Secret goes, the token stops
	// working.
	if err := sas.Delete(ctx, "bot", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually("token secret removed with its service account", gone(ctx, secrets, "bot-token"))
	if st := review(t, env, token); st.Authenticated || st.Error != `[invalid bearer token, Token has been invalidated]` {
		t.Fatalf("token of a deleted service account: %+v", st)
	}
}

func gone(ctx context.Context, secrets *rest.Resource[*corev1.Secret, *corev1.SecretList], name string) func() error {
	return func() error {
		_, err := secrets.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	}
}
