package statemachine_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/examples/statemachine"
	dbv1 "github.com/setpoint-dev/setpoint/examples/statemachine/api/v1"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/testenv"
)

// The simulated durations of the tests, on the fake clock. Tests step the
// clock by step at a time, so a transition that came early (or a backoff
// that did not grow) shows as a transition time below the promised one.
var testOptions = statemachine.Options{
	MaxConcurrentReconciles: 1,
	ProvisionTime:           10 * time.Minute,
	UpdateTime:              5 * time.Minute,
	TeardownTime:            3 * time.Minute,
	RetryBaseDelay:          time.Minute,
	RetryMaxDelay:           4 * time.Minute,
}

const step = time.Minute

// fixture is an API server with the CRD installed, the controller on a
// manager driven by a fake clock, and a client.
type fixture struct {
	clock *clocktesting.FakeClock
	// client reads from the server, not a cache, so that a read sees
	// every write before it; its scheme holds Database.
	client client.Client
	logs   *testenv.LogBuffer
}

func start(t *testing.T) *fixture {
	t.Helper()
	env := testenv.StartT(t, testenv.Options{})
	rc, err := rest.New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.CloseIdleConnections)
	if err := statemachine.InstallCRD(context.Background(), rc, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	scheme, err := manager.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	if err := dbv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(client.Options{Config: env.Config, Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{
		clock:  clocktesting.NewFakeClock(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)),
		client: c,
		logs:   &testenv.LogBuffer{},
	}
	mgr, err := manager.New(manager.Options{Config: env.Config, Scheme: scheme, MetricsAddr: "0", HealthAddr: "0",
		Clock: f.clock, Logger: slog.New(slog.NewTextHandler(f.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := statemachine.Add(mgr, testOptions); err != nil {
		t.Fatal(err)
	}
	testenv.RunManager(t, mgr, f.logs)
	return f
}

func (f *fixture) create(t *testing.T, name string, spec dbv1.DatabaseSpec) *dbv1.Database {
	t.Helper()
	db := &dbv1.Database{TypeMeta: metav1.TypeMeta{APIVersion: dbv1.GroupVersion.String(), Kind: "Database"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: spec}
	if err := f.client.Create(context.Background(), db); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	return db
}

// get returns the Database, or nil once it is gone.
func (f *fixture) get(t *testing.T, name string) *dbv1.Database {
	t.Helper()
	db := &dbv1.Database{}
	err := f.client.Get(context.Background(), key(name), db)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get database %s: %v", name, err)
	}
	return db
}

// key names an object of namespace default.
func key(name string) client.ObjectKey { return client.ObjectKey{Namespace: "default", Name: name} }

// patchSpec merges spec (JSON) into the Database's spec.
func (f *fixture) patchSpec(t *testing.T, name, spec string) *dbv1.Database {
	t.Helper()
	db := &dbv1.Database{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	if err := f.client.Patch(context.Background(), db, client.RawPatch(types.MergePatchType, []byte(`{"spec":`+spec+`}`))); err != nil {
		t.Fatalf("patch database %s: %v", name, err)
	}
	return db
}

// inPhase is a condition: the Database exists and is in phase.
func inPhase(phase dbv1.Phase) func(*dbv1.Database) string {
	return func(db *dbv1.Database) string {
		if db == nil {
			return "gone"
		}
		if db.Status.Phase != phase {
			return fmt.Sprintf("phase %q (%s)", db.Status.Phase, db.Status.Message)
		}
		return ""
	}
}

func gone(db *dbv1.Database) string {
	if db != nil {
		return fmt.Sprintf("still there in phase %q", db.Status.Phase)
	}
	return ""
}

// wait polls the Database (testenv.Eventually), without touching the
// clock, until cond returns "" (within 30 s), and returns it.
func (f *fixture) wait(t *testing.T, name, what string, cond func(*dbv1.Database) string) *dbv1.Database {
	t.Helper()
	var db *dbv1.Database
	testenv.Eventually(t, 30*time.Second, "database "+name+" "+what, func() string {
		db = f.get(t, name)
		return cond(db)
	})
	return db
}

// advance steps the fake clock by jump, then by step at a time, polling
// after each step for up to 500 ms (at most 40 steps) until cond holds.
// It returns the Database and the fake time at which cond was seen: no
// step happened after that, so a transition seen then happened at that
// time or before. A step taken before the controller registered its
// RequeueAfter only delays the transition by another step; tests check
// that transitions are never early, which that cannot hide.
func (f *fixture) advance(t *testing.T, name, what string, jump time.Duration, cond func(*dbv1.Database) string) (*dbv1.Database, time.Time) {
	t.Helper()
	why := ""
	f.clock.Step(jump)
	for range 40 {
		db, ok, w := f.poll(t, name, 500*time.Millisecond, cond)
		if ok {
			return db, f.clock.Now()
		}
		why = w
		f.clock.Step(step)
	}
	t.Fatalf("database %s %s: not reached within 40 steps of %s: %s", name, what, step, why)
	return nil, time.Time{}
}

// poll is advance's window: it polls the Database every 20 ms for up to
// timeout. An example's tests use the public library only, and testenv
// has no wait that steps a fake clock, so advance keeps its own loop.
func (f *fixture) poll(t *testing.T, name string, timeout time.Duration, cond func(*dbv1.Database) string) (*dbv1.Database, bool, string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		db := f.get(t, name)
		why := cond(db)
		if why == "" {
			return db, true, ""
		}
		if time.Now().After(deadline) {
			return db, false, why
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitEvents waits until the Database (uid) has an Event of each reason,
// and returns the events by reason.
func (f *fixture) waitEvents(t *testing.T, uid types.UID, reasons ...string) map[string]corev1.Event {
	t.Helper()
	var got map[string]corev1.Event
	testenv.Eventually(t, 30*time.Second, "events of "+string(uid), func() string {
		list := &corev1.EventList{}
		if err := f.client.List(context.Background(), list, client.InNamespace("default"), client.MatchingFields{"involvedObject.uid": string(uid)}); err != nil {
			t.Fatalf("list events: %v", err)
		}
		got = map[string]corev1.Event{}
		for _, e := range list.Items {
			got[e.Reason] = e
		}
		var missing, seen []string
		for _, r := range reasons {
			if _, ok := got[r]; !ok {
				missing = append(missing, r)
			}
		}
		if len(missing) == 0 {
			return ""
		}
		for r := range got {
			seen = append(seen, r)
		}
		return fmt.Sprintf("missing %v, have %v", missing, seen)
	})
	return got
}

// ready returns the Ready condition's status and reason.
func ready(db *dbv1.Database) (metav1.ConditionStatus, string) {
	for _, c := range db.Status.Conditions {
		if c.Type == dbv1.ConditionReady {
			return c.Status, c.Reason
		}
	}
	return "", ""
}

func logHas(f *fixture, substr ...string) string {
	logs := f.logs.String()
	for _, line := range strings.Split(logs, "\n") {
		all := true
		for _, s := range substr {
			all = all && strings.Contains(line, s)
		}
		if all {
			return ""
		}
	}
	return fmt.Sprintf("no log line with %q", substr)
}
