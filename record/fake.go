package record

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// FakeRecorder keeps the events recorded through it in memory, for unit
// tests of reconcilers (as client-go's FakeRecorder): each is
// "<type> <reason> <message>". Safe for concurrent use; the zero value is
// ready.
type FakeRecorder struct {
	mu     sync.Mutex
	events []string
}

var _ Recorder = (*FakeRecorder)(nil)

// Event records one event.
func (f *FakeRecorder) Event(_ runtime.Object, eventtype, reason, message string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, eventtype+" "+reason+" "+message)
}

// Eventf records one event with a formatted message.
func (f *FakeRecorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	f.Event(object, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

// AnnotatedEventf records one event; the annotations are not kept.
func (f *FakeRecorder) AnnotatedEventf(object runtime.Object, _ map[string]string, eventtype, reason, messageFmt string, args ...any) {
	f.Eventf(object, eventtype, reason, messageFmt, args...)
}

// Events returns the events recorded so far, oldest first.
func (f *FakeRecorder) Events() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.events...)
}
