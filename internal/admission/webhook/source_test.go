package webhook_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/admission/webhook"
	"github.com/setpoint-dev/setpoint/internal/testserver"
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
	deadline := time.Now().Add(10 * time.Second)
	for len(first) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("configuration not seen")
		}
		var err error
		if first, err = src.Hooks(context.Background(), env); err != nil {
			t.Fatal(err)
		}
	}
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
	for {
		h, err := src.Hooks(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		if h[0] != first[0] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("hooks not rebuilt after a change")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
