package webhook_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/webhookclient/webhooktest"
)

// A webhook served by a process on the host, registered as Kubernetes
// expects: a Service without selector, an EndpointSlice naming the host,
// and a service client config; the certificate names
// <service>.<namespace>.svc. The plugins' metrics count the calls.
func TestServiceReferenceWebhook(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	namespace(t, s, "wh")
	ip := webhooktest.HostIP(t)
	calls := make(chan string, 16)
	srv := webhooktest.StartOn(t, webhooktest.NewCA(t), ip, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls <- r.URL.Path
		var rv admissionv1.AdmissionReview
		if err := jsonDecode(r, &rv); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":%q,"allowed":false,"status":{"message":"via the service"}}}`, rv.Request.UID)
	}), "hooks.wh.svc")
	mustDo(t, s, "POST", "/api/v1/namespaces/wh/services",
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"hooks"},"spec":{"ports":[{"name":"https","port":443,"targetPort":9443}]}}`, 201)
	mustDo(t, s, "POST", "/apis/discovery.k8s.io/v1/namespaces/wh/endpointslices", fmt.Sprintf(`{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice",
		"metadata":{"name":"hooks-1","labels":{"kubernetes.io/service-name":"hooks"}},"addressType":"IPv4",
		"endpoints":[{"addresses":[%q]}],"ports":[{"name":"https","port":%d}]}`, ip, srv.Port), 201)
	hook := strings.Replace(webhookJSON("svc.example.com", "", srv.CABundle, ""), `"url":""`,
		`"service":{"namespace":"wh","name":"hooks","path":"/check"}`, 1)
	register(t, s, "ValidatingWebhookConfiguration", "wh-svc", hook)
	eventually(t, "the webhook", func() bool {
		code, _, _ := do(t, s, "POST", "/api/v1/namespaces/wh/configmaps", configMap("x", ""))
		return code == 400
	})
	if p := <-calls; p != "/check" {
		t.Errorf("path called: %s", p)
	}
	code, body, _ := do(t, s, "POST", "/api/v1/namespaces/wh/configmaps", configMap("y", ""))
	if st := status(t, body); code != 400 || st.Message != `admission webhook "svc.example.com" denied the request: via the service` {
		t.Errorf("create: %d %s", code, body)
	}
	metrics := mustDo(t, s, "GET", "/metrics", "", 200)
	for _, want := range []string{
		`apiserver_admission_webhook_admission_duration_seconds_count{name="svc.example.com",operation="CREATE",rejected="true",type="validating"}`,
		`apiserver_admission_webhook_rejection_count{error_type="no_error",name="svc.example.com",operation="CREATE",rejection_code="400",type="validating"}`,
		`apiserver_admission_webhook_request_total{code="400",name="svc.example.com",operation="CREATE",rejected="true",type="validating"}`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
