package cache

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"
)

// MutationDetectorEnv names the environment variable that, when it parses
// as true (strconv.ParseBool), turns on mutation detection for every
// indexer built without an explicit WithMutationDetector option.
const MutationDetectorEnv = "SETPOINT_CACHE_MUTATION_DETECTOR"

// fingerprint is a digest of an object's content.
type fingerprint [sha256.Size]byte

// FingerprintFunc digests an object's content so that any change to the
// object changes the digest.
type FingerprintFunc[T any] func(obj T) ([sha256.Size]byte, error)

// JSONFingerprint digests the JSON encoding of obj. It sees every exported
// field, which for API types is every field that matters.
func JSONFingerprint[T any](obj T) ([sha256.Size]byte, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("encoding for fingerprint: %w", err)
	}
	return sha256.Sum256(raw), nil
}

// Option configures an indexer.
type Option[T any] func(*options[T])

type options[T any] struct {
	detect      bool
	explicit    bool
	fingerprint FingerprintFunc[T]
}

// WithMutationDetector turns mutation detection on (fn non-nil) or off (fn
// nil), overriding MutationDetectorEnv. While it is on, the indexer keeps a
// fingerprint of every stored object, taken when it was stored, and
// CheckMutations compares them with the objects' current content. It costs
// one fingerprint per write; meant for tests.
func WithMutationDetector[T any](fn FingerprintFunc[T]) Option[T] {
	return func(o *options[T]) {
		o.explicit = true
		o.detect = fn != nil
		o.fingerprint = fn
	}
}

func buildOptions[T any](opts []Option[T]) options[T] {
	var o options[T]
	for _, opt := range opts {
		opt(&o)
	}
	if !o.explicit {
		if on, err := strconv.ParseBool(os.Getenv(MutationDetectorEnv)); err == nil && on {
			o.detect = true
			o.fingerprint = JSONFingerprint[T]
		}
	}
	return o
}

// mutationDetector holds the fingerprint function; the fingerprints live
// in the entries.
type mutationDetector[T any] struct {
	print FingerprintFunc[T]
}

// MutationError reports stored objects whose content changed after they
// were stored: somebody modified a shared object instead of a copy.
type MutationError struct {
	// Keys of the mutated objects, sorted.
	Keys []string
}

func (e *MutationError) Error() string {
	return fmt.Sprintf("cache: %d stored object(s) mutated in place: %v", len(e.Keys), e.Keys)
}

// MutationDetectionEnabled reports whether CheckMutations can find anything.
func (s *ThreadSafeIndexer[T]) MutationDetectionEnabled() bool { return s.detector != nil }

// CheckMutations re-fingerprints every stored object and returns a
// *MutationError naming those whose content differs from when they were
// stored. It returns nil when detection is off or nothing changed. Call it
// at the end of a test, or periodically from a test harness.
func (s *ThreadSafeIndexer[T]) CheckMutations() error {
	if s.detector == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var mutated []string
	for key, e := range s.items {
		now, err := s.detector.print(e.obj)
		if err != nil {
			return fmt.Errorf("cache: check mutations: fingerprinting %q: %w", key, err)
		}
		if e.print == nil || fingerprint(now) != *e.print {
			mutated = append(mutated, key)
		}
	}
	if len(mutated) == 0 {
		return nil
	}
	slices.Sort(mutated)
	return &MutationError{Keys: mutated}
}

// RunMutationChecks calls CheckMutations at every tick and hands each
// non-nil result to report, until ctx ends or tick is closed. Pass the
// channel of a real or fake clock's ticker.
func (s *ThreadSafeIndexer[T]) RunMutationChecks(ctx context.Context, tick <-chan time.Time, report func(error)) {
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-tick:
			if !ok {
				return
			}
			if err := s.CheckMutations(); err != nil {
				report(err)
			}
		}
	}
}
