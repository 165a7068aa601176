package storagetest

import (
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

type testCase struct {
	name string
	fn   func(t *testing.T, s storage.Store)
}

// cases lists the single-store tests, by file.
func cases() []testCase {
	var all []testCase
	all = append(all, crudCases()...)
	all = append(all, listCases()...)
	all = append(all, watchCases()...)
	all = append(all, concurrencyCases()...)
	return all
}

// Run runs the whole conformance suite against stores made by newStore:
// every single-store test on a fresh store, then the metamorphic test over
// many seeds. newStore returns a fresh, empty store; the suite closes it
// when the subtest ends (a store must tolerate a second Close, returning nil
// or storage.ErrClosed) and then checks that no goroutine outlives it.
func Run(t *testing.T, newStore func(t *testing.T) storage.Store) {
	for _, tc := range cases() {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, Open(t, newStore))
		})
	}
	t.Run("Metamorphic", func(t *testing.T) { runMetamorphic(t, newStore) })
}

// Open makes a store with newStore and registers, in this order of
// execution at the end of t: closing it, then checking that every
// goroutine started since Open has exited.
func Open(t *testing.T, newStore func(t *testing.T) storage.Store) storage.Store {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	s := newStore(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, storage.ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}
