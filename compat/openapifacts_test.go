package compat

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/setpoint-dev/setpoint/compat/internal/openapifacts"
	"github.com/setpoint-dev/setpoint/compat/refcluster"
)

// factsFile is internal/openapi's generated data file.
const factsFile = "../internal/openapi/zz_generated_facts.go"

// TestOpenAPIFactsCurrent regenerates the facts of the built-in models
// (enum values, list and map types, required properties, unions, defaults)
// from the reference's OpenAPI and fails when internal/openapi's data file
// differs: run `go run ./cmd/openapifacts` in the compat directory.
func TestOpenAPIFactsCurrent(t *testing.T) {
	v3, v2, err := openapifacts.Fetch(context.Background(), env.ref.Client, env.ref.URL)
	if err != nil {
		t.Fatal(err)
	}
	facts, err := openapifacts.Extract(v3, v2)
	if err != nil {
		t.Fatal(err)
	}
	want, err := facts.Render("kube-apiserver " + refcluster.Version)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(factsFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale against the reference (%d models): run `go run ./cmd/openapifacts` in the compat directory", factsFile, len(facts.Models))
	}
	enums := 0
	for _, m := range facts.Models {
		for _, p := range m.Props {
			if len(p.Enum)+len(p.ItemEnum)+len(p.ValueEnum) > 0 {
				enums++
			}
		}
	}
	t.Logf("%d models, %d enum properties", len(facts.Models), enums)
}
