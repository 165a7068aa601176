package openapi

import (
	"fmt"
	"github.com/setpoint-dev/setpoint/internal/discovery"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/discovery/discoverytest"
)

var dur = 40

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

func TestScratchServe(t *testing.T) {
	s, err := New(discoverytest.Resources(), Options{Version: "v1.37.0"})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := discovery.New(discoverytest.Resources())
	mux := http.NewServeMux()
	s.Register(mux)
	d.Register(mux)
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.0-setpoint"}`))
	})
	l, _ := net.Listen("tcp", "127.0.0.1:18080")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println(r.Method, r.URL, r.Header.Get("Accept"))
		mux.ServeHTTP(w, r)
	})}
	go srv.Serve(l)
	time.Sleep(time.Duration(dur) * time.Second)
}
