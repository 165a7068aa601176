package webhook_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/admission/webhook"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

// The compiled configurations are reused while the cache's objects stay
// the same, and rebuilt when one changes.
func TestSourceReusesCompiledHooks(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	body := `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"c"},"webhooks":[
		{"name":"a.example.com","clientConfig":{"url":"https://127.0.0.1:1/x"},"rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}],
		"matchConditions":[{"name":"n","expression":"true"}],"sideEffects":"None","admissionReviewVersions":["v1"]}]}`
	if code, b, _ := s.Do(t, "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", "application/json", strings.NewReader(body)); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, b)
	}
	src := &webhook.TestSource{}
	env := s.API.Env()
	var first []any
	deadline := time.Now().Add(10 * time.Second) // for both waits
	testwait.UntilEvery(t, time.Until(deadline), time.Millisecond, "configuration seen", testwait.Bool(func() bool {
		var err error
		if first, err = src.Hooks(context.Background(), env); err != nil {
			t.Fatal(err)
		}
		return len(first) > 0
	}))
	again, err := src.Hooks(context.Background(), env)
	if err != nil || len(again) != 1 || again[0] != first[0] {
		t.Fatalf("hooks recompiled without a change: %v", err)
	}
	patch := `{"metadata":{"labels":{"changed":"yes"}}}`
	req, _ := http.NewRequest("PATCH", s.URL+"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/c", strings.NewReader(patch))
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := s.Client.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("patch: %v", err)
	}
	resp.Body.Close()
	testwait.UntilEvery(t, time.Until(deadline), 20*time.Millisecond, "hooks rebuilt after a change", testwait.Bool(func() bool {
		h, err := src.Hooks(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		return h[0] != first[0]
	}))
}
