// Package deps pins the module's dependencies while the packages that use
// them are written in parallel. Delete it once every import below has a
// real user.
package deps

import (
	_ "github.com/google/btree"
	_ "github.com/google/gnostic-models/openapiv2"
	_ "github.com/google/gnostic-models/openapiv3"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/spf13/cobra"
	_ "go.etcd.io/bbolt"
	_ "go.uber.org/goleak"
	_ "golang.org/x/net/http2"
	_ "google.golang.org/protobuf/proto"
	_ "gopkg.in/evanphx/json-patch.v4"
	_ "k8s.io/apimachinery/pkg/util/managedfields"
	_ "k8s.io/apimachinery/pkg/util/strategicpatch"
	_ "k8s.io/kube-openapi/pkg/spec3"
	_ "k8s.io/kube-openapi/pkg/validation/spec"
	_ "sigs.k8s.io/json"
	_ "sigs.k8s.io/yaml"
)
