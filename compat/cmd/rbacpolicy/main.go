// Command rbacpolicy writes internal/rbacpolicy/zz_generated_policy.json:
// the default roles and bindings kube-apiserver v1.37.2 creates at start
// (every ClusterRole, ClusterRoleBinding, Role and RoleBinding labelled
// kubernetes.io/bootstrapping=rbac-defaults), read from a running
// reference with the server-set metadata stripped. An aggregated
// ClusterRole is written as kube-apiserver defines it (its aggregationRule,
// no rules: the aggregation controller fills them); its aggregated rules,
// as the reference's controller manager wrote them, go to
// internal/rbacpolicy/testdata/aggregated.json for the tests that compare
// setpoint's aggregation with kube's.
//
// Run it from the compat directory after the reference version changes,
// against a reference that runs kube-controller-manager (so the aggregated
// roles are filled) and holds no ClusterRoles of its own that an
// aggregation rule selects:
//
//	cd compat && go run ./cmd/rbacpolicy -kubeconfig /path/to/reference/kubeconfig
//
// Without -kubeconfig (or SETPOINT_REFERENCE_KUBECONFIG) it starts a
// reference cluster with a controller manager for the purpose (package
// refcluster).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/setpoint-dev/setpoint/compat/refcluster"
	"github.com/setpoint-dev/setpoint/rest"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("SETPOINT_REFERENCE_KUBECONFIG"), "the reference's kubeconfig; empty starts a reference cluster")
	out := flag.String("out", "../internal/rbacpolicy/zz_generated_policy.json", "the policy file to write")
	aggregated := flag.String("aggregated", "../internal/rbacpolicy/testdata/aggregated.json", "the file of the aggregated roles' rules to write")
	flag.Parse()
	if err := run(*kubeconfig, *out, *aggregated); err != nil {
		slog.Error("rbacpolicy", "err", err)
		os.Exit(1)
	}
}

func run(kubeconfig, out, aggregatedOut string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if kubeconfig == "" {
		ref, err := refcluster.Start(ctx, refcluster.Options{ControllerManager: true})
		if err != nil {
			return err
		}
		defer ref.Stop() //nolint:errcheck // best effort
		kubeconfig = ref.Kubeconfig()
		if err := waitAggregated(ctx, kubeconfig); err != nil {
			return err
		}
	}
	cfg, err := rest.ConfigFromKubeconfig(kubeconfig, "")
	if err != nil {
		return err
	}
	c, err := rest.New(cfg)
	if err != nil {
		return err
	}
	p, agg, err := fetch(ctx, c)
	if err != nil {
		return err
	}
	if err := writeJSON(out, p); err != nil {
		return err
	}
	if err := writeJSON(aggregatedOut, agg); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d clusterroles, %d clusterrolebindings, %d roles, %d rolebindings; %s: %d aggregated roles\n",
		out, len(p.ClusterRoles), len(p.ClusterRoleBindings), len(p.Roles), len(p.RoleBindings), aggregatedOut, len(agg))
	return nil
}
