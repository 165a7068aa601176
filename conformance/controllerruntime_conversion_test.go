package conformance

import (
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/setpoint-dev/setpoint/internal/webhookclient/webhooktest"
	"github.com/setpoint-dev/setpoint/testenv"
)

// The Endpoint kind of these tests: v1 (the Convertible spoke) writes
// spec.address as "host:port"; v2 (the Hub) has spec.host and spec.port.
var endpointGroup = schema.GroupVersion{Group: "conversion.setpoint.test", Version: "v1"}.Group

type EndpointV1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Address string `json:"address,omitempty"`
	} `json:"spec"`
}

type EndpointV1List struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EndpointV1 `json:"items"`
}

type EndpointV2 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Host string `json:"host,omitempty"`
		Port int32  `json:"port,omitempty"`
	} `json:"spec"`
}

type EndpointV2List struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EndpointV2 `json:"items"`
}

func (e *EndpointV1) DeepCopyObject() runtime.Object {
	c := *e
	e.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

func (e *EndpointV2) DeepCopyObject() runtime.Object {
	c := *e
	e.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

func (l *EndpointV1List) DeepCopyObject() runtime.Object {
	c := *l
	c.Items = make([]EndpointV1, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*EndpointV1)
	}
	return &c
}

func (l *EndpointV2List) DeepCopyObject() runtime.Object {
	c := *l
	c.Items = make([]EndpointV2, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*EndpointV2)
	}
	return &c
}

// Hub marks v2 as the hub of conversions.
func (*EndpointV2) Hub() {}

// ConvertTo converts v1 to the hub.
func (e *EndpointV1) ConvertTo(dst conversion.Hub) error {
	h := dst.(*EndpointV2)
	h.ObjectMeta = e.ObjectMeta
	host, port, _ := strings.Cut(e.Spec.Address, ":")
	n, _ := strconv.Atoi(port)
	h.Spec.Host, h.Spec.Port = host, int32(n)
	return nil
}

// ConvertFrom converts the hub to v1.
func (e *EndpointV1) ConvertFrom(src conversion.Hub) error {
	h := src.(*EndpointV2)
	e.ObjectMeta = h.ObjectMeta
	e.Spec.Address = h.Spec.Host + ":" + strconv.Itoa(int(h.Spec.Port))
	return nil
}

func endpointScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := apiextv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	v1 := schema.GroupVersion{Group: endpointGroup, Version: "v1"}
	v2 := schema.GroupVersion{Group: endpointGroup, Version: "v2"}
	s.AddKnownTypeWithName(v1.WithKind("Endpoint"), &EndpointV1{})
	s.AddKnownTypeWithName(v1.WithKind("EndpointList"), &EndpointV1List{})
	s.AddKnownTypeWithName(v2.WithKind("Endpoint"), &EndpointV2{})
	s.AddKnownTypeWithName(v2.WithKind("EndpointList"), &EndpointV2List{})
	metav1.AddToGroupVersion(s, v1)
	metav1.AddToGroupVersion(s, v2)
	return s
}

// endpointCRD is the Endpoint CRD (storage v1) converted by the webhook at
// url, trusted through caBundle.
func endpointCRD(url string, caBundle []byte) *apiextv1.CustomResourceDefinition {
	version := func(name string, props map[string]apiextv1.JSONSchemaProps) apiextv1.CustomResourceDefinitionVersion {
		return apiextv1.CustomResourceDefinitionVersion{Name: name, Served: true, Storage: name == "v1",
			Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{Type: "object",
				Properties: map[string]apiextv1.JSONSchemaProps{"spec": {Type: "object", Properties: props}}}}}
	}
	return &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "endpoints." + endpointGroup},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: endpointGroup, Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Plural: "endpoints", Singular: "endpoint", Kind: "Endpoint", ListKind: "EndpointList"},
			Versions: []apiextv1.CustomResourceDefinitionVersion{
				version("v1", map[string]apiextv1.JSONSchemaProps{"address": {Type: "string"}}),
				version("v2", map[string]apiextv1.JSONSchemaProps{"host": {Type: "string"}, "port": {Type: "integer"}}),
			},
			Conversion: &apiextv1.CustomResourceConversion{Strategy: apiextv1.WebhookConverter, Webhook: &apiextv1.WebhookConversion{
				ClientConfig:             &apiextv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
				ConversionReviewVersions: []string{"v1", "v1beta1"},
			}},
		},
	}
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// controller-runtime's own webhook server serves a conversion webhook
// (conversion.NewWebhookHandler over Hub/Convertible types) that setpoint
// calls: objects written at one version are read, listed, updated and
// patched at the other, through controller-runtime's client.
func TestControllerRuntimeConversionWebhook(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	scheme := endpointScheme(t)
	ca := webhooktest.NewCA(t)
	cert := ca.Serving(t)
	port := freePort(t)
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil }
		}}})
	opts := crManagerOptions(t)
	opts.Scheme, opts.WebhookServer = scheme, srv
	mgr, err := manager.New(clientConfig(t, env), opts)
	if err != nil {
		t.Fatal(err)
	}
	// As kubebuilder projects register it: through the manager, which
	// then runs the server.
	mgr.GetWebhookServer().Register("/convert", crconversion.NewWebhookHandler(scheme, crconversion.NewRegistry()))
	crStart(t, mgr)
	ctx := context.Background()
	var last error
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		last = srv.StartedChecker()(nil)
		return last == nil, nil
	}); err != nil {
		t.Fatalf("webhook server not started: %v (%v)", err, last)
	}

	c, err := client.New(clientConfig(t, env), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	crd := endpointCRD("https://127.0.0.1:"+strconv.Itoa(port)+"/convert", ca.PEM)
	if err := c.Create(ctx, crd); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		var list EndpointV2List
		return c.List(ctx, &list, client.InNamespace("default")) == nil, nil
	}); err != nil {
		t.Fatalf("endpoints not served at v2: %v", err)
	}

	v1 := &EndpointV1{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default", Labels: map[string]string{"app": "db"}}}
	v1.Spec.Address = "db.local:5432"
	if err := c.Create(ctx, v1); err != nil {
		t.Fatalf("create v1: %v", err)
	}
	var hub EndpointV2
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "db"}, &hub); err != nil {
		t.Fatalf("get v2: %v", err)
	}
	if hub.Spec.Host != "db.local" || hub.Spec.Port != 5432 || hub.Labels["app"] != "db" || hub.UID != v1.UID {
		t.Fatalf("v2 read of a v1 object: %+v", hub)
	}

	// A write at v2 is converted for storage and answered at v2.
	hub.Spec.Port = 6432
	if err := c.Update(ctx, &hub); err != nil {
		t.Fatalf("update v2: %v", err)
	}
	if hub.Spec.Host != "db.local" || hub.Spec.Port != 6432 {
		t.Fatalf("update answer: %+v", hub.Spec)
	}
	var back EndpointV1
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "db"}, &back); err != nil {
		t.Fatal(err)
	}
	if back.Spec.Address != "db.local:6432" {
		t.Fatalf("v1 read after a v2 update: %q", back.Spec.Address)
	}

	// Patches and lists at v2.
	created := &EndpointV2{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "default"}}
	created.Spec.Host, created.Spec.Port = "cache.local", 6379
	if err := c.Create(ctx, created); err != nil {
		t.Fatalf("create v2: %v", err)
	}
	patch := client.MergeFrom(created.DeepCopyObject().(*EndpointV2))
	created.Spec.Port = 6380
	if err := c.Patch(ctx, created, patch); err != nil {
		t.Fatalf("patch v2: %v", err)
	}
	var list EndpointV2List
	if err := c.List(ctx, &list, client.InNamespace("default")); err != nil {
		t.Fatalf("list v2: %v", err)
	}
	got := map[string]string{}
	for _, it := range list.Items {
		got[it.Name] = it.Spec.Host + ":" + strconv.Itoa(int(it.Spec.Port))
	}
	if got["db"] != "db.local:6432" || got["cache"] != "cache.local:6380" {
		t.Fatalf("v2 list: %v", got)
	}
	var v1list EndpointV1List
	if err := c.List(ctx, &v1list, client.InNamespace("default")); err != nil {
		t.Fatalf("list v1: %v", err)
	}
	for _, it := range v1list.Items {
		if it.Name == "cache" && it.Spec.Address != "cache.local:6380" {
			t.Fatalf("v1 list of a v2 object: %+v", it.Spec)
		}
	}
}

var _ = []conversion.Convertible{&EndpointV1{}}
