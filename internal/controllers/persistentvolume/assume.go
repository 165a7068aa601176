package persistentvolume

import (
	"sync"

	"github.com/setpoint-dev/setpoint/cache"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/controllers/volumeutil"
)

// assumed overlays an informer's cache with the objects the controller
// wrote itself, until the informer catches up: a sync right after a write
// sees the write, not the older cached object (kube's assume cache). A
// write that loses a race is refused by the server (resourceVersion
// conflict), so a stale overlay never causes a wrong write, only a retry.
type assumed[T informer.Object] struct {
	inf *informer.Informer[T]
	mu  sync.Mutex
	m   map[string]T
}

func newAssumed[T informer.Object](inf *informer.Informer[T]) *assumed[T] {
	return &assumed[T]{inf: inf, m: map[string]T{}}
}

// store records obj as written by the controller.
func (a *assumed[T]) store(obj T) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if old, ok := a.m[key]; !ok || volumeutil.Newer(obj.GetResourceVersion(), old.GetResourceVersion()) {
		a.m[key] = obj
	}
}

// get returns the newest known object of key (shared: copy before
// modifying); an object the informer no longer has is gone.
func (a *assumed[T]) get(key string) (T, bool) {
	cached, ok, _ := a.inf.Indexer().GetByKey(key)
	a.mu.Lock()
	defer a.mu.Unlock()
	mine, have := a.m[key]
	switch {
	case !ok:
		delete(a.m, key)
		return cached, false
	case have && mine.GetUID() == cached.GetUID() && volumeutil.Newer(mine.GetResourceVersion(), cached.GetResourceVersion()):
		return mine, true
	default:
		delete(a.m, key)
		return cached, true
	}
}

// list returns the newest known objects.
func (a *assumed[T]) list() []T {
	objs := a.inf.Indexer().List()
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		key, err := cache.MetaNamespaceKeyFunc(o)
		if err != nil {
			continue
		}
		if cur, ok := a.get(key); ok {
			out = append(out, cur)
		}
	}
	return out
}
