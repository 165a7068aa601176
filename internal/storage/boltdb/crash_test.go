package boltdb

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// The crash test re-executes the test binary as a writer child (TestMain
// runs crashChild when crashPathEnv is set), kills it with SIGKILL after a
// random number of acknowledged writes, and checks the reopened file.

const (
	crashPathEnv  = "SETPOINT_BOLT_CRASH_PATH"
	crashRoundEnv = "SETPOINT_BOLT_CRASH_ROUND"
	crashWriters  = 16
	crashRounds   = 6
)

// crashValue is the 1 KiB value a child writes for key in its n-th write.
func crashValue(key string, n int) []byte {
	v := bytes.Repeat([]byte{byte('a' + n)}, 1024)
	copy(v, fmt.Sprintf("%s#%d#", key, n))
	return v
}

// crashChild writes until killed, printing "C|U|D key rev" once each write
// is acknowledged. It returns an exit code.
func crashChild(path string, round int) int {
	s, err := Open(path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var out sync.Mutex
	ack := func(op, key string, rev int64) {
		out.Lock()
		defer out.Unlock()
		// One write(2) per line: a line is either wholly out or not at all.
		if _, err := fmt.Fprintf(os.Stdout, "%s %s %d\n", op, key, rev); err != nil {
			os.Exit(3)
		}
	}
	var wg sync.WaitGroup
	for g := range crashWriters {
		wg.Go(func() {
			ctx := context.Background()
			for i := 0; ; i++ {
				key := fmt.Sprintf("crash/%d/%02d/%06d", round, g, i)
				rev, err := s.Create(ctx, key, crashValue(key, 0))
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(4)
				}
				ack("C", key, rev)
				if i%3 == 0 {
					if rev, err = s.Update(ctx, key, crashValue(key, 1), rev); err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(4)
					}
					ack("U", key, rev)
				}
				if i%5 == 0 {
					if rev, _, err = s.Delete(ctx, key, rev); err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(4)
					}
					ack("D", key, rev)
				}
			}
		})
	}
	wg.Wait()
	return 0
}

type crashAck struct {
	op, key string
	rev     int64
}

func TestCrashRecovery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crash.db")
	var acks []crashAck
	var lastCur int64
	for round := range crashRounds {
		killAt := 100 + rand.IntN(3000)
		got := runCrashChild(t, path, round, killAt)
		t.Logf("round %d: killed after %d acknowledged writes, read %d", round, killAt, len(got))
		for _, a := range got {
			if a.rev <= lastCur {
				t.Fatalf("round %d acknowledged revision %d, not above the recovered %d", round, a.rev, lastCur)
			}
		}
		acks = append(acks, got...)
		checkBoltFile(t, path)
		lastCur = verifyRecovered(t, path, acks)
	}
}

// runCrashChild runs one writer child, kills it once killAt writes were
// acknowledged and returns every acknowledgement it printed.
func runCrashChild(t *testing.T, path string, round, killAt int) []crashAck {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashPathEnv+"="+path, fmt.Sprintf("%s=%d", crashRoundEnv, round))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acks []crashAck
	r := bufio.NewReader(stdout)
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			break // a fragment without newline was never acknowledged
		}
		if err != nil {
			t.Fatalf("reading the child: %v", err)
		}
		var a crashAck
		if _, err := fmt.Sscanf(line, "%s %s %d\n", &a.op, &a.key, &a.rev); err != nil {
			t.Fatalf("bad line %q: %v", line, err)
		}
		acks = append(acks, a)
		if len(acks) == killAt {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatalf("kill: %v", err)
			}
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if len(acks) < killAt || !errors.As(err, &exit) || exit.ExitCode() != -1 {
		t.Fatalf("child ended by itself after %d writes (%v): %s", len(acks), err, stderr.String())
	}
	return acks
}

// checkBoltFile runs bbolt's own page consistency check.
func checkBoltFile(t *testing.T, path string) {
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatalf("bolt open: %v", err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("bolt check: %v", err)
	}
}

// verifyRecovered reopens the store and checks every acknowledged write at
// its revision, and that the whole history replays; it returns the current
// revision.
func verifyRecovered(t *testing.T, path string, acks []crashAck) int64 {
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	ctx := t.Context()
	cur, err := s.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byRev := make(map[int64]crashAck, len(acks))
	for _, a := range acks {
		if a.rev > cur {
			t.Fatalf("acknowledged %s %s at %d, above the recovered revision %d", a.op, a.key, a.rev, cur)
		}
		byRev[a.rev] = a
		res, err := s.List(ctx, a.key, storage.ListOptions{Revision: a.rev})
		if err != nil {
			t.Fatalf("history of %s at %d: %v", a.key, a.rev, err)
		}
		switch {
		case a.op == "D" && len(res.KVs) != 0:
			t.Fatalf("%s deleted at %d is still there", a.key, a.rev)
		case a.op == "D":
		case len(res.KVs) != 1 || res.KVs[0].ModRevision != a.rev:
			t.Fatalf("acknowledged %s %s at %d lost: %+v", a.op, a.key, a.rev, res.KVs)
		case !bytes.Equal(res.KVs[0].Value, crashValue(a.key, map[string]int{"C": 0, "U": 1}[a.op])):
			t.Fatalf("%s at %d has the wrong value %.40q", a.key, a.rev, res.KVs[0].Value)
		}
	}
	verifyReplay(t, s, cur, byRev)
	return cur
}

// verifyReplay watches the whole history (from revision 1) and checks that
// every revision up to cur replays, matching the acknowledged writes.
func verifyReplay(t *testing.T, s storage.Store, cur int64, byRev map[int64]crashAck) {
	w, err := s.Watch(t.Context(), "", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	next := int64(2)
	for next <= cur {
		resp, ok := <-w.Responses()
		if !ok {
			t.Fatalf("replay ended at %d of %d: %v", next, cur, w.Err())
		}
		for _, e := range resp.Events {
			if e.Revision != next {
				t.Fatalf("replay: revision %d, want %d", e.Revision, next)
			}
			next++
			a, ok := byRev[e.Revision]
			if !ok {
				continue // committed but not acknowledged before the kill
			}
			kind := map[string]storage.EventType{"C": storage.EventPut, "U": storage.EventPut, "D": storage.EventDelete}[a.op]
			if e.Key != a.key || e.Type != kind || e.Created != (a.op == "C") {
				t.Fatalf("replay at %d: %s %s created=%v, acknowledged %s %s", e.Revision, e.Type, e.Key, e.Created, a.op, a.key)
			}
		}
	}
}
