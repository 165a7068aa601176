package informer

import (
	"reflect"
	"sync"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// compactAll compacts every object of objs with c, several rounds so that
// values pass admission and get shared.
func compactAll(c *compactor, objs []any) {
	for _, o := range objs {
		c.Compact(o)
	}
}

func TestCompactKeepsObjectsEqual(t *testing.T) {
	for _, mode := range []Compaction{CompactShare, CompactStrings} {
		c := newCompactor(mode)
		// Three rounds: the later ones meet canonical values from the
		// earlier ones and from each other.
		for round := range 3 {
			got, want := variedObjects(), variedObjects()
			compactAll(c, got)
			for i := range got {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("mode %d round %d: object %d changed by compaction:\n got %#v\nwant %#v", mode, round, i, got[i], want[i])
				}
				if !apiequality.Semantic.DeepEqual(got[i], want[i]) {
					t.Fatalf("mode %d round %d: object %d not semantically equal after compaction", mode, round, i)
				}
			}
		}
	}
}

// sameSlice tells whether two slices share their first element.
func sameSlice[E any](a, b []E) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}

func sameString(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func samePtrMap[K comparable, V any](a, b map[K]V) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func TestCompactShareSharesEqualSubObjects(t *testing.T) {
	c := newCompactor(CompactShare)
	var pods []*corev1.Pod
	for i := range 12 {
		p := serverPod(i*100, "x7k2p") // one app and namespace: equal specs
		c.Compact(p)
		pods = append(pods, p)
	}
	// The first occurrences pass admission (a value nested d references
	// deep needs d+2 of them); from then on equal values are one copy.
	a, b := pods[10], pods[11]
	checks := map[string]bool{
		"containers":        sameSlice(a.Spec.Containers, b.Spec.Containers),
		"volumes":           sameSlice(a.Spec.Volumes, b.Spec.Volumes),
		"tolerations":       sameSlice(a.Spec.Tolerations, b.Spec.Tolerations),
		"ownerReferences":   sameSlice(a.OwnerReferences, b.OwnerReferences),
		"conditions":        sameSlice(a.Status.Conditions, b.Status.Conditions),
		"labels":            samePtrMap(a.Labels, b.Labels),
		"startTime":         a.Status.StartTime == b.Status.StartTime,
		"started":           a.Status.ContainerStatuses[0].Started == b.Status.ContainerStatuses[0].Started,
		"namespace":         sameString(a.Namespace, b.Namespace),
		"containerStatuses": !sameSlice(a.Status.ContainerStatuses, b.Status.ContainerStatuses), // ids differ
		"image in statuses": sameString(a.Status.ContainerStatuses[0].Image, b.Status.ContainerStatuses[0].Image),
		"name":              a.Name != b.Name,
	}
	for what, ok := range checks {
		if !ok {
			t.Errorf("%s: not as expected (shared when equal, apart when not)", what)
		}
	}
	// Another app's pods share the volumes, not the containers.
	other := serverPod(1, "x7k2p")
	c.Compact(other)
	if sameSlice(other.Spec.Containers, a.Spec.Containers) {
		t.Error("containers of different apps are shared")
	}
	if !sameSlice(other.Spec.Volumes, a.Spec.Volumes) {
		t.Error("equal volumes of different apps are not shared")
	}
}

func TestCompactNeverMergesUnequalValues(t *testing.T) {
	c := newCompactor(CompactShare)
	base := func() *corev1.Pod { return serverPod(0, "x7k2p") }
	for range 4 {
		c.Compact(base())
	}
	variants := map[string]func(p *corev1.Pod){
		"env value": func(p *corev1.Pod) { p.Spec.Containers[0].Env[0].Value = "debug" },
		"quantity form": func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = mustQuantity("268435456")
		},
		"empty not nil": func(p *corev1.Pod) { p.Spec.Tolerations = p.Spec.Tolerations[:0] },
		"nil not empty": func(p *corev1.Pod) { p.Spec.Containers[0].Ports = nil },
		"pointed bool":  func(p *corev1.Pod) { p.OwnerReferences[0].Controller = ptr(false) },
		"extra label":   func(p *corev1.Pod) { p.Labels["extra"] = "" },
		"condition time": func(p *corev1.Pod) {
			p.Status.Conditions[3].LastTransitionTime.Time = p.Status.Conditions[3].LastTransitionTime.Add(1)
		},
	}
	for name, change := range variants {
		for range 3 { // past admission, so the variant is canonical too
			got, want := base(), base()
			change(got)
			change(want)
			c.Compact(got)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: compaction merged unequal values:\n got %#v\nwant %#v", name, got.Spec, want.Spec)
			}
		}
	}
	// And the base pods still compact to themselves.
	got := base()
	c.Compact(got)
	if !reflect.DeepEqual(got, base()) {
		t.Fatal("base pod changed after variants were cached")
	}
}

func TestCompactStringsSharesNoSubObjectsAndTrims(t *testing.T) {
	c := newCompactor(CompactStrings)
	a, b := serverPod(0, "x7k2p"), serverPod(50, "x7k2p")
	a.Spec.Tolerations = append(make([]corev1.Toleration, 0, 8), a.Spec.Tolerations...)
	for _, p := range []*corev1.Pod{serverPod(0, "x7k2p"), a, b} {
		c.Compact(p)
	}
	if sameSlice(a.Spec.Containers, b.Spec.Containers) || samePtrMap(a.Labels, b.Labels) {
		t.Fatal("CompactStrings shared a slice or map")
	}
	if !sameString(a.Spec.Containers[0].Image, b.Spec.Containers[0].Image) {
		t.Fatal("CompactStrings did not intern the image")
	}
	if cap(a.Spec.Tolerations) != len(a.Spec.Tolerations) {
		t.Fatalf("tolerations not trimmed: cap %d len %d", cap(a.Spec.Tolerations), len(a.Spec.Tolerations))
	}
}

func TestCompactUnstructuredSharesAndKeepsTypes(t *testing.T) {
	c := newCompactor(CompactShare)
	var objs []*unstructured.Unstructured
	for range 4 {
		for _, o := range unstructuredObjects() {
			u := o.(*unstructured.Unstructured)
			c.Compact(u)
			objs = append(objs, u)
		}
	}
	spec := func(u *unstructured.Unstructured) map[string]any { return u.Object["spec"].(map[string]any) }
	w1, w2, w3 := objs[len(objs)-5], objs[len(objs)-4], objs[len(objs)-3]
	if !samePtrMap(spec(w1), spec(w2)) {
		t.Error("equal specs of w1 and w2 are not shared")
	}
	if samePtrMap(spec(w1), spec(w3)) {
		t.Error("specs of w1 and w3 (int64 3 vs float64 3, 0.5 vs -0) are shared")
	}
	if _, ok := spec(w3)["size"].(float64); !ok {
		t.Errorf("w3 size became %T", spec(w3)["size"])
	}
}

func TestCompactCollisionLeavesValueAlone(t *testing.T) {
	c := newCompactor(CompactShare)
	p, other := serverPod(0, "x7k2p"), serverPod(1, "x7k2p")
	v := reflect.ValueOf(&p.Spec.Containers).Elem()
	vp := c.plan(v.Type())
	// Pretend other's containers hashed like p's.
	c.nodes.put(c.shallowHash(v, vp), nodeOf(reflect.ValueOf(&other.Spec.Containers).Elem()))
	before := p.Spec.Containers
	if _, found := c.lookup(v, vp); found || !sameSlice(p.Spec.Containers, before) {
		t.Fatal("a colliding unequal value replaced the containers")
	}
}

func TestCompactConcurrentWithReaders(t *testing.T) {
	c := newCompactor(CompactShare)
	const writers, perWriter = 4, 60
	published := make(chan *corev1.Pod, writers*perWriter)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				p := serverPod(w*perWriter+i, "x7k2p")
				c.Compact(p)
				published <- p
			}
		})
	}
	// Readers walk published pods while writers keep compacting: the race
	// detector fails the test if compaction wrote to shared values.
	readers := sync.WaitGroup{}
	check := make(chan *corev1.Pod, writers*perWriter)
	for range 2 {
		readers.Go(func() {
			for p := range check {
				n := 0
				fmtPodSize(p, &n)
			}
		})
	}
	go func() { wg.Wait(); close(published) }()
	var all []*corev1.Pod
	for p := range published {
		all = append(all, p)
		check <- p
	}
	close(check)
	readers.Wait()
	for _, p := range all {
		var i int
		for i = 0; i < writers*perWriter; i++ {
			if serverPod(i, "x7k2p").Name == p.Name {
				break
			}
		}
		if want := serverPod(i, "x7k2p"); !reflect.DeepEqual(p, want) {
			t.Fatalf("pod %s changed by concurrent compaction", p.Name)
		}
	}
}

// fmtPodSize reads every field of p.
func fmtPodSize(p *corev1.Pod, n *int) {
	b, err := p.Marshal()
	if err != nil {
		panic(err)
	}
	*n += len(b)
}

func TestGenTableBounded(t *testing.T) {
	g := newGenTable[int, int](4)
	g.put(-1, -1)
	for i := range 100 {
		g.get(-1) // kept in use: survives every retirement
		g.put(i, i)
		if g.len() > 8+1 {
			t.Fatalf("table holds %d entries, bound 2x4", g.len())
		}
	}
	if _, ok := g.get(-1); !ok {
		t.Fatal("an entry in use was forgotten")
	}
	if _, ok := g.get(0); ok {
		t.Fatal("an entry not used for two retirements is still there")
	}
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

func TestInformerCompactsCachedObjects(t *testing.T) {
	for _, mode := range []Compaction{CompactShare, CompactNone} {
		inf := newInformer(Options[*corev1.Pod]{Compaction: mode})
		running(t, inf)
		var list []*corev1.Pod
		for i := range 12 {
			list = append(list, serverPod(i*100, "x7k2p"))
		}
		if err := inf.sink.Replace(list, "1"); err != nil {
			t.Fatal(err)
		}
		waitSynced(t, inf.HasSynced)
		a, errA := inf.Lister().Namespace("ns-0").Get(serverPod(1000, "").Name)
		b, errB := inf.Lister().Namespace("ns-0").Get(serverPod(1100, "").Name)
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if shared := sameSlice(a.Spec.Containers, b.Spec.Containers); shared != (mode == CompactShare) {
			t.Fatalf("mode %d: containers shared = %v", mode, shared)
		}
		if !reflect.DeepEqual(b, serverPod(1100, "x7k2p")) {
			t.Fatalf("mode %d: cached pod differs from the one sent", mode)
		}
	}
}
