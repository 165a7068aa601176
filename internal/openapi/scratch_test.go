package openapi

import (
	"os"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/discovery/discoverytest"
)

func TestScratch(t *testing.T) {
	start := time.Now()
	p, err := newPlan(discoverytest.Resources())
	if err != nil {
		t.Fatal(err)
	}
	v3, err := p.renderV3("v1.37.0")
	if err != nil {
		t.Fatal(err)
	}
	t.Log("v3", time.Since(start))
	start = time.Now()
	v2, err := p.renderV2("v1.37.0")
	if err != nil {
		t.Fatal(err)
	}
	t.Log("v2", time.Since(start), len(v2.body))
	start = time.Now()
	pb, err := toProtobuf(v2.body)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("pb", time.Since(start), len(pb.body))
	os.WriteFile("/tmp/v2.json", v2.body, 0644)
	os.WriteFile("/tmp/v3disco.json", v3.discovery.body, 0644)
	for k, d := range v3.docs {
		t.Log(k, len(d.body))
		if k == "api/v1" {
			os.WriteFile("/tmp/v3core.json", d.body, 0644)
		}
	}
}
