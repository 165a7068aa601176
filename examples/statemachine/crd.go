package statemachine

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/rest"
)

// CRDManifest is the CustomResourceDefinition of databases.demo.setpoint.dev
// as YAML, what `kubectl apply -f examples/statemachine/crd.yaml` applies.
//
//go:embed crd.yaml
var CRDManifest []byte

// CRDName is the name of the CustomResourceDefinition.
const CRDName = "databases.demo.setpoint.dev"

// CRD returns CRDManifest decoded.
func CRD() (*apiextv1.CustomResourceDefinition, error) {
	crd := &apiextv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(CRDManifest, crd); err != nil {
		return nil, fmt.Errorf("decode %s: %w", CRDName, err)
	}
	return crd, nil
}

// InstallCRD creates the CRD (or updates its spec when it exists) and
// waits, polling every 100 ms up to timeout, until the API server reports
// it Established, i.e. databases are served.
func InstallCRD(ctx context.Context, c *rest.Client, timeout time.Duration) error {
	want, err := CRD()
	if err != nil {
		return err
	}
	crds := rest.For[*apiextv1.CustomResourceDefinition, *apiextv1.CustomResourceDefinitionList](c,
		apiextv1.SchemeGroupVersion.WithResource("customresourcedefinitions"), false)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := crds.Create(ctx, want, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		live, err := crds.Get(ctx, CRDName, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("read CRD %s: %w", CRDName, err)
		}
		live.Spec = want.Spec
		if _, err := crds.Update(ctx, live, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update CRD %s: %w", CRDName, err)
		}
	} else if err != nil {
		return fmt.Errorf("create CRD %s: %w", CRDName, err)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		live, err := crds.Get(ctx, CRDName, metav1.GetOptions{})
		if err == nil && established(live) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not established within %s (last read error: %v)", CRDName, timeout, err)
		case <-tick.C:
		}
	}
}

func established(crd *apiextv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextv1.Established {
			return c.Status == apiextv1.ConditionTrue
		}
	}
	return false
}
