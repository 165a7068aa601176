package openapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/setpoint-dev/setpoint/internal/discovery"
	"github.com/setpoint-dev/setpoint/internal/openapi"
	"github.com/setpoint-dev/setpoint/internal/registry/builtin"
)

// TestBuiltinResources builds discovery and OpenAPI over the server's real
// resource list.
func TestBuiltinResources(t *testing.T) {
	if _, err := discovery.New(builtin.Resources()); err != nil {
		t.Fatal(err)
	}
	s, err := openapi.New(builtin.Resources(), openapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.ServeV2(rec, httptest.NewRequest(http.MethodGet, "/openapi/v2", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/openapi/v2: %d %s", rec.Code, rec.Body)
	}
}

// BenchmarkBuild measures New over the built-in resources: reflection and
// the OpenAPI v3 documents (what every Update costs).
func BenchmarkBuild(b *testing.B) {
	resources := builtin.Resources()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := openapi.New(resources, openapi.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildWith20CustomResources measures Update over the built-in
// resources plus 20 custom resources (10 groups, two versions each) when
// one of them changed its schema: what the API server pays on every change
// of a CRD.
func BenchmarkBuildWith20CustomResources(b *testing.B) {
	resources := append(builtin.Resources(), manyCustomResources(b, 20)...)
	s, err := openapi.New(resources, openapi.Options{})
	if err != nil {
		b.Fatal(err)
	}
	changed := resources[len(resources)-1]
	schemas := []*spec.Schema{mustSchema(b, cronTabV1Schema), mustSchema(b, cronTabV1Schema)}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		changed.Schema = schemas[i%2]
		i++
		if err := s.Update(resources); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildWithV2 adds the lazily built Swagger 2.0 JSON and protobuf
// forms (paid on the first /openapi/v2 request after an Update).
func BenchmarkBuildWithV2(b *testing.B) {
	resources := builtin.Resources()
	req := httptest.NewRequest(http.MethodGet, "/openapi/v2", nil)
	req.Header.Set("Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
	b.ReportAllocs()
	for b.Loop() {
		s, err := openapi.New(resources, openapi.Options{})
		if err != nil {
			b.Fatal(err)
		}
		rec := httptest.NewRecorder()
		s.ServeV2(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

// BenchmarkServeV3 measures serving a cached group-version document.
func BenchmarkServeV3(b *testing.B) {
	s, err := openapi.New(builtin.Resources(), openapi.Options{})
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/openapi/v3/api/v1", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		s.ServeV3(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}
