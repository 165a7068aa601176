package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStateMachine is issue 6's "done when" for seed 004 §6.3's
// state-machine controller: with real kubectl against `setpoint up`, the
// Database CRD is applied and established, the example binary runs, and
// Databases go Pending → Provisioning → Running, Updating → Running after
// a spec patch, Failed and then Running after failProvisioning is patched
// off, and Terminating → gone on delete; kubectl shows the printer
// columns and the transition events, and SIGTERM ends the binary with 0.
func TestStateMachine(t *testing.T) {
	t.Parallel()
	cl := startUp(t, 1)
	cl.kubectl(t, "", "apply", "-f", "../examples/statemachine/crd.yaml")
	cl.kubectl(t, "", "wait", "--for=condition=Established", "--timeout=30s", "crd/databases.demo.setpoint.dev")

	ex := startOperator(t, "statemachine/cmd/statemachine", "statemachine controller running", "--kubeconfig", cl.kubeconfig,
		"--provision-time", "2s", "--update-time", "3s", "--teardown-time", "3s", "--retry-base-delay", "2s")

	cl.kubectl(t, "apiVersion: demo.setpoint.dev/v1\nkind: Database\nmetadata: {name: orders}\nspec: {engine: postgres, version: \"16\"}\n",
		"apply", "-f", "-")
	waitDBPhase(t, cl, "orders", "Running")
	if r := rows(cl.kubectl(t, "", "get", "databases")); len(r) != 1 || r[0][0] != "orders" || r[0][1] != "postgres" || r[0][2] != "Running" {
		t.Errorf("kubectl get databases: %v", r)
	}
	if out := cl.kubectl(t, "", "get", "db", "orders", "-o", "jsonpath={.spec.storageGB} {.metadata.finalizers}"); out != `10 ["demo.setpoint.dev/teardown"]` {
		t.Errorf("defaulted storage and finalizer: %q", out)
	}

	cl.kubectl(t, "", "patch", "database", "orders", "--type", "merge", "-p", `{"spec":{"storageGB":20}}`)
	waitDBPhase(t, cl, "orders", "Updating")
	waitDBPhase(t, cl, "orders", "Running")
	if out := cl.kubectl(t, "", "get", "db", "orders", "-o", "jsonpath={.metadata.generation} {.status.observedGeneration} {.status.conditions[0].status}"); out != "2 2 True" {
		t.Errorf("generation, observedGeneration, Ready after the update: %q", out)
	}

	cl.kubectl(t, "apiVersion: demo.setpoint.dev/v1\nkind: Database\nmetadata: {name: flaky}\nspec: {engine: mysql, failProvisioning: true}\n",
		"apply", "-f", "-")
	waitDBPhase(t, cl, "flaky", "Failed")
	if msg := cl.kubectl(t, "", "get", "db", "flaky", "-o", "jsonpath={.status.message}"); !strings.Contains(msg, "simulated failure") {
		t.Errorf("failed message %q", msg)
	}
	eventually(t, 60*time.Second, "a second failed attempt", func() string {
		out := cl.kubectl(t, "", "get", "db", "flaky", "-o", "jsonpath={.status.retries}")
		if n, _ := strconv.Atoi(out); n < 2 {
			return "retries " + out
		}
		return ""
	})
	cl.kubectl(t, "", "patch", "database", "flaky", "--type", "merge", "-p", `{"spec":{"failProvisioning":false}}`)
	waitDBPhase(t, cl, "flaky", "Running")
	if out := cl.kubectl(t, "", "get", "db", "flaky", "-o", "jsonpath={.status.retries}"); out != "" && out != "0" {
		t.Errorf("retries after recovery: %q", out)
	}

	cl.kubectl(t, "", "delete", "database", "orders", "--wait=false")
	waitDBPhase(t, cl, "orders", "Terminating")
	cl.kubectl(t, "", "wait", "--for=delete", "--timeout=60s", "database/orders")
	cl.kubectl(t, "", "delete", "database", "flaky", "--timeout=60s")
	if out := cl.kubectl(t, "", "get", "databases", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("databases left: %q", out)
	}

	eventually(t, 30*time.Second, "transition events", func() string {
		for name, reasons := range map[string][]string{
			"orders": {"Pending", "Provisioning", "Provisioned", "Updating", "Updated", "Terminating", "TornDown"},
			"flaky":  {"ProvisioningFailed", "Retrying", "Provisioned", "TornDown"},
		} {
			got := cl.kubectl(t, "", "get", "events", "--field-selector", "involvedObject.name="+name,
				"-o", "jsonpath={range .items[*]}{.reason}{\"\\n\"}{end}")
			for _, r := range reasons {
				if !strings.Contains(got, r+"\n") {
					return fmt.Sprintf("%s: no %s event; reasons: %q", name, r, got)
				}
			}
		}
		return ""
	})
	for _, want := range []string{"from=Pending to=Provisioning", "from=Provisioning to=Running", "from=Running to=Updating",
		"from=Provisioning to=Failed", "from=Failed to=Pending", "from=Running to=Terminating", "teardown complete"} {
		if !strings.Contains(ex.errOut.String(), want) {
			t.Errorf("no log line with %q", want)
		}
	}
	ex.stop(t)
}

// waitDBPhase waits with kubectl wait until the Database's phase is phase.
func waitDBPhase(t *testing.T, cl *upCluster, name, phase string) {
	t.Helper()
	cl.kubectl(t, "", "wait", "--for=jsonpath={.status.phase}="+phase, "--timeout=60s", "database/"+name)
}
