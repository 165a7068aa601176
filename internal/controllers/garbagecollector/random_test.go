package garbagecollector_test

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// mobj is the model of one config map of a random forest.
type mobj struct {
	name   string
	uid    types.UID
	alive  bool
	owners []int // indexes of the owners it still references
}

// forest is the expected state: which objects live and which owner
// references they keep.
type forest []*mobj

// delete applies the deletion of objs[x] with policy to the model: the
// object goes; orphan strips the references to it; otherwise every
// object left with references only to dead owners goes too, repeatedly.
// Survivors lose their references to dead owners (the collector removes
// dangling references from objects that keep a live owner).
func (f forest) delete(x int, policy metav1.DeletionPropagation) {
	f[x].alive = false
	if policy != metav1.DeletePropagationOrphan {
		for changed := true; changed; {
			changed = false
			for _, o := range f {
				if o.alive && len(o.owners) > 0 && !slices.ContainsFunc(o.owners, func(i int) bool { return f[i].alive }) {
					o.alive, changed = false, true
				}
			}
		}
	}
	for _, o := range f {
		if o.alive {
			o.owners = slices.DeleteFunc(o.owners, func(i int) bool { return !f[i].alive })
		}
	}
}

// expected renders the model as name -> sorted owner uids.
func (f forest) expected() map[string][]types.UID {
	out := map[string][]types.UID{}
	for _, o := range f {
		if o.alive {
			uids := []types.UID{}
			for _, i := range o.owners {
				uids = append(uids, f[i].uid)
			}
			slices.Sort(uids)
			out[o.name] = uids
		}
	}
	return out
}

// TestRandomForests builds random owner/dependent DAGs of config maps
// (several owners per object, random blockOwnerDeletion), deletes random
// live objects in random propagation modes one after the other, and after
// each deletion waits until the objects left and their references are
// exactly what the model predicts.
func TestRandomForests(t *testing.T) {
	e := newEnv(t)
	e.runGC(t)
	for seed := int64(1); seed <= 10; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { randomForest(t, e, seed) })
	}
}

func randomForest(t *testing.T, e *env, seed int64) {
	r := rand.New(rand.NewSource(seed))
	ns := fmt.Sprintf("random-%d", seed)
	e.namespace(t, ns)
	const size, deletions = 40, 12
	f := make(forest, size)
	for i := range f {
		o := &mobj{name: fmt.Sprintf("cm-%02d", i), alive: true}
		var refs []metav1.OwnerReference
		if i > 0 {
			for range r.Intn(3) {
				j := r.Intn(i)
				if !slices.Contains(o.owners, j) {
					o.owners = append(o.owners, j)
					refs = append(refs, ref(e.getCM(t, ns, f[j].name), r.Intn(2) == 0))
				}
			}
		}
		o.uid = e.createCM(t, ns, o.name, nil, refs...).UID
		f[i] = o
	}
	policies := []metav1.DeletionPropagation{metav1.DeletePropagationBackground,
		metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan}
	for step := range deletions {
		var alive []int
		for i, o := range f {
			if o.alive {
				alive = append(alive, i)
			}
		}
		if len(alive) == 0 {
			return
		}
		x, policy := alive[r.Intn(len(alive))], policies[r.Intn(len(policies))]
		f.delete(x, policy)
		e.deleteCM(t, ns, f[x].name, policy)
		want := f.expected()
		eventually(t, 30*time.Second, func() (bool, string) {
			got := e.observe(t, ns)
			return mapsEqual(got, want), fmt.Sprintf("step %d (delete %s, %s):\n got  %v\n want %v", step, f[x].name, policy, got, want)
		})
	}
}

// observe lists the test's config maps of ns as name -> sorted owner uids.
func (e *env) observe(t *testing.T, ns string) map[string][]types.UID {
	l, err := e.cms(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "gc-test=1"})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	out := map[string][]types.UID{}
	for i := range l.Items {
		uids := append([]types.UID{}, ownerUIDs(&l.Items[i])...)
		slices.Sort(uids)
		out[l.Items[i].Name] = uids
	}
	return out
}

func mapsEqual(a, b map[string][]types.UID) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}
