package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

const metadataPolicy = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  namespaces: [quiet]\n- level: Metadata\n"

func writePolicy(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// auditOne runs one request through a's stages: received, then complete.
func auditOne(t *testing.T, a *Auditor, id, ns string, annotations ...string) bool {
	t.Helper()
	ctx := WithRequest(context.Background(), id, time.Now())
	md := RequestMetadata{
		Attributes: authorizer.Attributes{Verb: "get", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: ns, Name: "p"},
		User:       authnv1.UserInfo{Username: "alice"}, RequestURI: "/api/v1/namespaces/" + ns + "/pods/p",
	}
	if a.Begin(ctx, md) == LevelNone {
		return false
	}
	defer a.End()
	AddAnnotations(ctx, annotations...)
	ok := ProcessStage(ctx, StageRequestReceived)
	SetResponseCode(ctx, 200)
	return ProcessStage(ctx, StageResponseComplete) && ok
}

func readEvents(t *testing.T, path string) []Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, ev)
	}
	return out
}

func TestAuditorWritesJSONLines(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "sub", "audit.log")
	a, err := New(Options{PolicyFile: writePolicy(t, metadataPolicy), LogPath: logPath, Mode: ModeBlocking}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !auditOne(t, a, "id-1", "default", "k", "v") {
		t.Fatal("not audited")
	}
	if auditOne(t, a, "id-2", "quiet") {
		t.Fatal("a None request was audited")
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v, want 0600", st.Mode().Perm())
	}
	evs := readEvents(t, logPath)
	if len(evs) != 2 || evs[0].Stage != StageRequestReceived || evs[1].Stage != StageResponseComplete {
		t.Fatalf("events %+v", evs)
	}
	for _, ev := range evs {
		if ev.Kind != "Event" || ev.APIVersion != GroupVersion || ev.AuditID != "id-1" || ev.Level != LevelMetadata ||
			ev.User.Username != "alice" || ev.ObjectRef == nil || ev.ObjectRef.Name != "p" || ev.Annotations["k"] != "v" {
			t.Errorf("event %+v", ev)
		}
	}
	if !evs[0].StageTimestamp.Equal(&evs[0].RequestReceivedTimestamp) {
		t.Errorf("RequestReceived stageTimestamp %v, want the receipt time %v", evs[0].StageTimestamp, evs[0].RequestReceivedTimestamp)
	}
	if evs[1].ResponseStatus == nil || evs[1].ResponseStatus.Code != 200 || evs[0].ResponseStatus != nil {
		t.Errorf("response status: %+v then %+v", evs[0].ResponseStatus, evs[1].ResponseStatus)
	}
}

func TestAuditorOffWithoutPolicyOrPath(t *testing.T) {
	for _, o := range []Options{{LogPath: filepath.Join(t.TempDir(), "a.log")}, {PolicyFile: writePolicy(t, metadataPolicy)}} {
		a, err := New(o, nil)
		if err != nil || a != nil {
			t.Errorf("%+v: auditor %v, err %v; want none", o, a, err)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	o := DefaultOptions()
	o.LogPath, o.MaxAge, o.MaxSize, o.Mode = "x", -1, -2, "sometimes"
	err := o.Validate()
	for _, want := range []string{"--audit-log-maxage -1 can't be a negative number", "--audit-log-maxsize -2 can't be a negative number", "invalid audit log mode sometimes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
	if _, err := New(Options{PolicyFile: writePolicy(t, "kind: Policy"), LogPath: filepath.Join(t.TempDir(), "l")}, nil); err == nil || !strings.Contains(err.Error(), "loading audit policy file") {
		t.Errorf("a bad policy: %v", err)
	}
}

func TestAnnotations(t *testing.T) {
	p, _ := ParsePolicy([]byte(metadataPolicy), nil)
	var sink lines
	a := NewWithWriter(p, &sink, nil, Options{}, nil)
	ctx := WithRequest(context.Background(), "id", time.Now())
	AddAnnotation(ctx, "early", "1") // before the policy: held, then joined
	a.Begin(ctx, RequestMetadata{Attributes: authorizer.Attributes{Verb: "get", Path: "/x"}})
	AddAnnotations(ctx, "authorization.k8s.io/decision", "allow", "authorization.k8s.io/reason", "")
	AddAnnotation(ctx, "authorization.k8s.io/decision", "forbid") // the first value stays
	AddAnnotations(ctx, "odd")                                    // dropped
	got := Annotations(ctx)
	want := map[string]string{"early": "1", "authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": ""}
	if len(got) != len(want) {
		t.Fatalf("annotations %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("annotation %s=%q, want %q", k, got[k], v)
		}
	}
	LogImpersonatedUser(ctx, authnv1.UserInfo{Username: "bob", Groups: []string{"g"}})
	ProcessStage(ctx, StageResponseComplete)
	a.End()
	if !strings.Contains(sink.String(), `"impersonatedUser":{"username":"bob","groups":["g"]}`) {
		t.Errorf("no impersonated user in %s", sink.String())
	}
	// Outside a request, and on a request at level None: no-ops.
	AddAnnotation(context.Background(), "k", "v")
	quiet := WithRequest(context.Background(), "q", time.Now())
	a.Begin(quiet, RequestMetadata{Attributes: authorizer.Attributes{ResourceRequest: true, Namespace: "quiet"}})
	AddAnnotation(quiet, "k", "v")
	if Annotations(quiet) != nil || LevelFrom(quiet) != LevelNone || IDFrom(quiet) != "q" {
		t.Errorf("a None request: annotations %v, level %s, id %q", Annotations(quiet), LevelFrom(quiet), IDFrom(quiet))
	}
}

// lines is a concurrency-safe writer; fail makes every write fail.
type lines struct {
	mu   sync.Mutex
	b    strings.Builder
	fail bool
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail {
		return 0, errors.New("disk full")
	}
	return l.b.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestModesOnWriteFailure(t *testing.T) {
	p, _ := ParsePolicy([]byte(metadataPolicy), nil)
	for mode, want := range map[string]bool{ModeBlocking: true, ModeBlockingStrict: false} {
		a := NewWithWriter(p, &lines{fail: true}, nil, Options{Mode: mode}, nil)
		if got := auditOne(t, a, "id", "default"); got != want {
			t.Errorf("%s: stage processed %v, want %v", mode, got, want)
		}
		if err := a.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBatchModeWritesEverythingByClose(t *testing.T) {
	p, _ := ParsePolicy([]byte(metadataPolicy), nil)
	var sink lines
	a := NewWithWriter(p, &sink, nil, Options{Mode: ModeBatch, BatchBufferSize: 1000}, nil)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			auditOne(t, a, "id-"+string(rune('a'+i%26)), "default")
		}()
	}
	wg.Wait()
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(sink.String(), "\n"); n != 100 {
		t.Errorf("%d events written, want 100", n)
	}
	// After Close nothing more is accepted.
	if auditOne(t, a, "late", "default") {
		t.Error("an event was accepted after Close")
	}
}

func TestCloseWaitsForRequestsInFlight(t *testing.T) {
	p, _ := ParsePolicy([]byte(metadataPolicy), nil)
	var sink lines
	a := NewWithWriter(p, &sink, nil, Options{}, nil)
	ctx := WithRequest(context.Background(), "slow", time.Now())
	a.Begin(ctx, RequestMetadata{Attributes: authorizer.Attributes{Verb: "watch", ResourceRequest: true, Resource: "pods"}})
	ProcessStage(ctx, StageRequestReceived)
	closed := make(chan error, 1)
	go func() { closed <- a.Close(context.Background()) }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) with a request in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	ProcessStage(ctx, StageResponseComplete)
	a.End()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(sink.String(), "\n"); n != 2 {
		t.Errorf("%d events, want both stages", n)
	}
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "audit.log")
	a, err := New(Options{PolicyFile: writePolicy(t, metadataPolicy), LogPath: logPath, MaxSize: 1, MaxBackup: 2, Mode: ModeBlocking}, nil)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 64<<10)
	// 4 MiB of events: the file rotates at 1 MiB; two backups are kept.
	for i := range 32 {
		if !auditOne(t, a, "id", "default", "big", big, "n", string(rune('a'+i%26))) {
			t.Fatal("not audited")
		}
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var backups []string
	// Old backups are removed in the background: wait up to 10 s for at
	// most two, then check there are exactly two.
	_ = testwait.Poll(t.Context(), 10*time.Second, 20*time.Millisecond, func() error {
		backups, _ = filepath.Glob(filepath.Join(dir, "audit-*.log"))
		if len(backups) > 2 {
			return fmt.Errorf("%d backups", len(backups))
		}
		return nil
	})
	if len(backups) != 2 {
		t.Fatalf("backups %v, want 2", backups)
	}
	for _, f := range append(backups, logPath) {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 1<<20 {
			t.Errorf("%s has %d bytes, over the 1 MiB limit", f, st.Size())
		}
		for _, ev := range readEvents(t, f) {
			if ev.Annotations["big"] != big {
				t.Errorf("%s: an event lost its body", f)
			}
		}
	}
}

// TestEventJSONAsKubeAPIServer decodes events kube-apiserver v1.37.2 wrote
// (testdata/kube-events.jsonl: a non-resource request, a create at
// RequestResponse, a refused authentication, a delete) and encodes them
// again: the bytes are the same, field order and omissions included.
func TestEventJSONAsKubeAPIServer(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "kube-events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(&ev)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != line {
			t.Errorf("re-encoded:\n got  %s\n want %s", out, line)
		}
	}
}
