package memory

import (
	"fmt"

	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/storage/mvcc"
)

// New returns an empty in-memory store with default options.
func New() storage.Store {
	return NewWithOptions(mvcc.Options{})
}

// NewWithOptions returns an empty in-memory store tuned by opts.
func NewWithOptions(opts mvcc.Options) *mvcc.Store {
	s, err := mvcc.New(NewBackend(), opts)
	if err != nil {
		// Opening an empty backend reads nothing that could be corrupt.
		panic(fmt.Sprintf("memory: opening an empty backend failed: %v", err))
	}
	return s
}
