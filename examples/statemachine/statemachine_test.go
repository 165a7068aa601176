package statemachine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/controllerutil"
	"github.com/setpoint-dev/setpoint/examples/statemachine"
	dbv1 "github.com/setpoint-dev/setpoint/examples/statemachine/api/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// checkTook fails unless the Database's current phase began at least d
// after the previous phase began at prev.
func checkTook(t *testing.T, db *dbv1.Database, prev *metav1.MicroTime, d time.Duration, what string) {
	t.Helper()
	if took := db.Status.PhaseTransitionTime.Sub(prev.Time); took < d {
		t.Errorf("%s took %s on the controller's clock, want at least %s", what, took, d)
	}
}

// TestLifecycle walks one Database through the happy path: Pending →
// Provisioning → Running (not before ProvisionTime), a spec change →
// Updating → Running (not before UpdateTime), deletion → Terminating →
// gone (not before TeardownTime), with the finalizer, observedGeneration,
// the Ready condition, one event per transition and "phase changed" logs.
func TestLifecycle(t *testing.T) {
	f := start(t)
	created := f.create(t, "orders", dbv1.DatabaseSpec{Engine: dbv1.EnginePostgres, Version: "16"})
	if created.Spec.StorageGB != 10 {
		t.Errorf("storageGB defaulted to %d, want 10 (the CRD's default)", created.Spec.StorageGB)
	}
	prov := f.wait(t, "orders", "Provisioning", inPhase(dbv1.PhaseProvisioning))
	if !controllerutil.ContainsFinalizer(prov, statemachine.Finalizer) {
		t.Errorf("finalizers %v, want %s", prov.Finalizers, statemachine.Finalizer)
	}
	if got := prov.Status.PhaseTransitionTime.Time; !got.Equal(f.clock.Now()) {
		t.Errorf("phaseTransitionTime %s, want the fake clock's %s", got, f.clock.Now())
	}
	if prov.Status.ObservedGeneration != prov.Generation || !strings.Contains(prov.Status.Message, "provisioning postgres 16 with 10 GB") {
		t.Errorf("provisioning status %+v (generation %d)", prov.Status, prov.Generation)
	}
	if st, reason := ready(prov); st != metav1.ConditionFalse || reason != "Provisioning" {
		t.Errorf("Ready = %s/%s while provisioning", st, reason)
	}

	running, _ := f.advance(t, "orders", "Running", testOptions.ProvisionTime-step, inPhase(dbv1.PhaseRunning))
	checkTook(t, running, prov.Status.PhaseTransitionTime, testOptions.ProvisionTime, "provisioning")
	if st, _ := ready(running); st != metav1.ConditionTrue || running.Status.ObservedGeneration != running.Generation || running.Status.Retries != 0 {
		t.Errorf("running status %+v (generation %d)", running.Status, running.Generation)
	}

	patched := f.patchSpec(t, "orders", `{"storageGB": 20}`)
	updating := f.wait(t, "orders", "Updating generation 2", func(db *dbv1.Database) string {
		if why := inPhase(dbv1.PhaseUpdating)(db); why != "" {
			return why
		}
		if db.Status.ObservedGeneration != patched.Generation {
			return "observedGeneration behind"
		}
		return ""
	})
	if st, reason := ready(updating); st != metav1.ConditionFalse || reason != "Updating" || !strings.Contains(updating.Status.Message, "20 GB") {
		t.Errorf("updating: Ready %s/%s, message %q", st, reason, updating.Status.Message)
	}
	updated, _ := f.advance(t, "orders", "Running again", testOptions.UpdateTime-step, inPhase(dbv1.PhaseRunning))
	checkTook(t, updated, updating.Status.PhaseTransitionTime, testOptions.UpdateTime, "update")
	if updated.Status.ObservedGeneration != patched.Generation {
		t.Errorf("observedGeneration %d after the update, want %d", updated.Status.ObservedGeneration, patched.Generation)
	}

	if err := f.client.Delete(context.Background(), &dbv1.Database{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "orders"}}); err != nil {
		t.Fatal(err)
	}
	term := f.wait(t, "orders", "Terminating", inPhase(dbv1.PhaseTerminating))
	if term.DeletionTimestamp == nil {
		t.Error("Terminating without a deletionTimestamp")
	}
	_, at := f.advance(t, "orders", "gone", testOptions.TeardownTime-step, gone)
	if took := at.Sub(term.Status.PhaseTransitionTime.Time); took < testOptions.TeardownTime {
		t.Errorf("teardown took %s, want at least %s", took, testOptions.TeardownTime)
	}

	events := f.waitEvents(t, created.UID, statemachine.ReasonPending, statemachine.ReasonProvisioning, statemachine.ReasonProvisioned,
		statemachine.ReasonUpdating, statemachine.ReasonUpdated, statemachine.ReasonTerminating, statemachine.ReasonTornDown)
	for reason, e := range events {
		if e.Type != corev1.EventTypeNormal || e.Source.Component != statemachine.DefaultName {
			t.Errorf("event %s: type %s, source %q", reason, e.Type, e.Source.Component)
		}
	}
	for _, tr := range [][2]string{{"", "Pending"}, {"Pending", "Provisioning"}, {"Provisioning", "Running"},
		{"Running", "Updating"}, {"Updating", "Running"}, {"Running", "Terminating"}} {
		if why := logHas(f, "phase changed", "database=orders", "from="+quoteEmpty(tr[0])+" ", "to="+tr[1]+" "); why != "" {
			t.Errorf("%s → %s: %s", tr[0], tr[1], why)
		}
	}
}

func quoteEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// TestFailedRetryAndRecovery: with spec.failProvisioning, provisioning
// ends Failed with a message and a Warning event; each retry waits
// longer (1m, then 2m: the second retry is not taken at 1m), counting
// retries in status; fixing the spec retries at once and reaches Running
// with the count reset. The clock jumps to one step before each deadline,
// and to the first retry's deadline before the second retry, so an early
// transition or a backoff that does not grow fails the test.
func TestFailedRetryAndRecovery(t *testing.T) {
	f := start(t)
	created := f.create(t, "flaky", dbv1.DatabaseSpec{Engine: dbv1.EngineMySQL, Version: "8.4", StorageGB: 50, FailProvisioning: true})
	prov := f.wait(t, "flaky", "Provisioning", inPhase(dbv1.PhaseProvisioning))

	failed1, _ := f.advance(t, "flaky", "Failed", testOptions.ProvisionTime-step, inPhase(dbv1.PhaseFailed))
	checkTook(t, failed1, prov.Status.PhaseTransitionTime, testOptions.ProvisionTime, "the failing provisioning")
	if failed1.Status.Retries != 1 || !strings.Contains(failed1.Status.Message, "simulated failure") ||
		!strings.Contains(failed1.Status.Message, "retrying in 1m0s") {
		t.Errorf("after the first failure: retries %d, message %q", failed1.Status.Retries, failed1.Status.Message)
	}
	if st, reason := ready(failed1); st != metav1.ConditionFalse || reason != "Failed" {
		t.Errorf("Ready = %s/%s when failed", st, reason)
	}
	if e := f.waitEvents(t, created.UID, statemachine.ReasonProvisioningFailed)[statemachine.ReasonProvisioningFailed]; e.Type != corev1.EventTypeWarning {
		t.Errorf("ProvisioningFailed event of type %s", e.Type)
	}

	retry1, _ := f.advance(t, "flaky", "retried", testOptions.RetryBaseDelay-step, inPhase(dbv1.PhaseProvisioning))
	checkTook(t, retry1, failed1.Status.PhaseTransitionTime, testOptions.RetryBaseDelay, "the first backoff")
	failed2, _ := f.advance(t, "flaky", "Failed again", testOptions.ProvisionTime-step, inPhase(dbv1.PhaseFailed))
	if failed2.Status.Retries != 2 || !strings.Contains(failed2.Status.Message, "retrying in 2m0s") {
		t.Errorf("after the second failure: retries %d, message %q", failed2.Status.Retries, failed2.Status.Message)
	}
	retry2, _ := f.advance(t, "flaky", "retried again", testOptions.RetryBaseDelay, inPhase(dbv1.PhaseProvisioning))
	checkTook(t, retry2, failed2.Status.PhaseTransitionTime, 2*testOptions.RetryBaseDelay, "the second backoff")
	failed3, _ := f.advance(t, "flaky", "Failed a third time", testOptions.ProvisionTime-step, inPhase(dbv1.PhaseFailed))
	if failed3.Status.Retries != 3 {
		t.Errorf("retries %d after the third failure", failed3.Status.Retries)
	}

	// Fixed: retried at once, without stepping the clock.
	fixed := f.patchSpec(t, "flaky", `{"failProvisioning": false}`)
	reprov := f.wait(t, "flaky", "Provisioning the fixed spec", func(db *dbv1.Database) string {
		if why := inPhase(dbv1.PhaseProvisioning)(db); why != "" {
			return why
		}
		if db.Status.ObservedGeneration != fixed.Generation {
			return "observedGeneration behind"
		}
		return ""
	})
	if reprov.Status.Retries != 0 || !reprov.Status.PhaseTransitionTime.Time.Equal(failed3.Status.PhaseTransitionTime.Time) {
		t.Errorf("after the fix: retries %d, moved at %s (failed at %s): want 0 and at once",
			reprov.Status.Retries, reprov.Status.PhaseTransitionTime, failed3.Status.PhaseTransitionTime)
	}
	running, _ := f.advance(t, "flaky", "Running", testOptions.ProvisionTime-step, inPhase(dbv1.PhaseRunning))
	if st, _ := ready(running); st != metav1.ConditionTrue || running.Status.Retries != 0 || running.Status.ObservedGeneration != fixed.Generation {
		t.Errorf("recovered status %+v", running.Status)
	}
	f.waitEvents(t, created.UID, statemachine.ReasonRetrying, statemachine.ReasonProvisioned)
	if why := logHas(f, "phase changed", "from=Failed", "to=Pending", "retries=0"); why != "" {
		t.Error(why)
	}
}

// TestUpdateFailsThenDeleted: a Running Database whose update fails goes
// Failed (UpdateFailed); deleted while Failed, it goes Terminating and is
// removed after the teardown.
func TestUpdateFailsThenDeleted(t *testing.T) {
	f := start(t)
	created := f.create(t, "ledger", dbv1.DatabaseSpec{Engine: dbv1.EnginePostgres, Version: "15"})
	f.wait(t, "ledger", "Provisioning", inPhase(dbv1.PhaseProvisioning))
	f.advance(t, "ledger", "Running", testOptions.ProvisionTime-step, inPhase(dbv1.PhaseRunning))
	f.patchSpec(t, "ledger", `{"version": "16", "failProvisioning": true}`)
	f.wait(t, "ledger", "Updating", inPhase(dbv1.PhaseUpdating))
	failed, _ := f.advance(t, "ledger", "Failed", testOptions.UpdateTime-step, inPhase(dbv1.PhaseFailed))
	if failed.Status.Retries != 1 || !strings.HasPrefix(failed.Status.Message, "update failed (attempt 1)") {
		t.Errorf("failed update: retries %d, message %q", failed.Status.Retries, failed.Status.Message)
	}
	if err := f.client.Delete(context.Background(), &dbv1.Database{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ledger"}}); err != nil {
		t.Fatal(err)
	}
	term := f.wait(t, "ledger", "Terminating", inPhase(dbv1.PhaseTerminating))
	_, at := f.advance(t, "ledger", "gone", testOptions.TeardownTime-step, gone)
	if took := at.Sub(term.Status.PhaseTransitionTime.Time); took < testOptions.TeardownTime {
		t.Errorf("teardown took %s, want at least %s", took, testOptions.TeardownTime)
	}
	f.waitEvents(t, created.UID, statemachine.ReasonUpdateFailed, statemachine.ReasonTerminating, statemachine.ReasonTornDown)
}

// TestInvalidSpec: the CRD's schema rejects bad specs with 422 naming the
// field, before the controller ever sees them.
func TestInvalidSpec(t *testing.T) {
	f := start(t)
	for _, c := range []struct {
		spec dbv1.DatabaseSpec
		want string
	}{
		{dbv1.DatabaseSpec{Engine: "oracle"}, "spec.engine"},
		{dbv1.DatabaseSpec{Engine: dbv1.EngineMySQL, StorageGB: 5000}, "spec.storageGB"},
		{dbv1.DatabaseSpec{}, "spec.engine"},
	} {
		db := &dbv1.Database{TypeMeta: metav1.TypeMeta{APIVersion: dbv1.GroupVersion.String(), Kind: "Database"},
			ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "default"}, Spec: c.spec}
		err := f.client.Create(context.Background(), db)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("create %+v: %v, want 422 naming %s", c.spec, err, c.want)
		}
	}
}
