package controllermanager_test

import (
	"testing"

	"github.com/setpoint-dev/setpoint/internal/controllermanager"
	"github.com/setpoint-dev/setpoint/rest"
)

// TestComponentConfigIsProtobuf: the components talk protobuf unless told
// otherwise, as kube-controller-manager's --kube-api-content-type, and the
// caller's configuration is left as it was.
func TestComponentConfigIsProtobuf(t *testing.T) {
	in := &rest.Config{Host: "https://127.0.0.1:6443"}
	out := controllermanager.ComponentConfig(in)
	if out.ContentType != rest.ContentTypeProtobuf || in.ContentType != "" || out.Host != in.Host {
		t.Fatalf("ComponentConfig: %q (caller's now %q)", out.ContentType, in.ContentType)
	}
	js := &rest.Config{Host: in.Host, ContentType: rest.ContentTypeJSON}
	if got := controllermanager.ComponentConfig(js); got.ContentType != rest.ContentTypeJSON {
		t.Fatalf("an explicit JSON content type became %q", got.ContentType)
	}
	if _, err := rest.New(out); err != nil {
		t.Fatalf("a protobuf client: %v", err)
	}
	if _, err := rest.New(&rest.Config{Host: in.Host, ContentType: "application/xml"}); err == nil {
		t.Fatal("an unknown content type was accepted")
	}
}
