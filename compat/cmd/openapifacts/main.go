// Command openapifacts writes internal/openapi/zz_generated_facts.go: the
// facts of the built-in OpenAPI models that Kubernetes takes from comments
// on its Go types (enum values, list and map types, list map keys,
// required properties, unions, defaults), read from the OpenAPI v3
// documents of the reference kube-apiserver v1.37.2 (package refcluster,
// started for the purpose). Run it from the compat directory after the
// reference version changes; the compat suite fails while the file is
// stale.
//
//	cd compat && go run ./cmd/openapifacts
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/setpoint-dev/setpoint/compat/internal/openapifacts"
	"github.com/setpoint-dev/setpoint/compat/refcluster"
)

func main() {
	out := flag.String("out", "../internal/openapi/zz_generated_facts.go", "the file to write")
	flag.Parse()
	if err := run(*out); err != nil {
		slog.Error("openapifacts", "err", err)
		os.Exit(1)
	}
}

func run(out string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ref, err := refcluster.Start(ctx, refcluster.Options{})
	if err != nil {
		return err
	}
	defer ref.Stop() //nolint:errcheck // best effort
	v3, v2, err := openapifacts.Fetch(ctx, ref.HTTPClient(), ref.URL())
	if err != nil {
		return err
	}
	facts, err := openapifacts.Extract(v3, v2)
	if err != nil {
		return err
	}
	src, err := facts.Render("kube-apiserver " + refcluster.Version)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, src, 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d models\n", out, len(facts.Models))
	return nil
}
