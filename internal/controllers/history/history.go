package history

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"maps"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
)

// HashLabel is the label of a ControllerRevision that carries the hash of
// its data.
const HashLabel = "controller.kubernetes.io/hash"

// maxPrefix is the longest owner name kept in a revision's name, so that
// the name stays within 253 bytes.
const maxPrefix = 223

// Hash returns the hash of a revision's data as Kubernetes computes it:
// FNV-1 32 over data, followed by collisionCount in decimal when it is not
// nil, the sum rendered in decimal through rand.SafeEncodeString.
func Hash(data []byte, collisionCount *int32) string {
	h := fnv.New32()
	_, _ = h.Write(data)
	if collisionCount != nil {
		_, _ = h.Write([]byte(strconv.FormatInt(int64(*collisionCount), 10)))
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// Name returns "<prefix>-<hash>", prefix cut to 223 bytes.
func Name(prefix, hash string) string {
	if len(prefix) > maxPrefix {
		prefix = prefix[:maxPrefix]
	}
	return prefix + "-" + hash
}

// NewRevision returns the (unsaved) revision number revision of owner,
// of kind ownerKind, holding data: named and labelled by its hash with
// collisionCount, with labels (usually the pod template's) and a
// controller ownerReference to owner. Namespace is owner's.
func NewRevision(owner metav1.Object, ownerKind schema.GroupVersionKind, labels map[string]string,
	data []byte, revision int64, collisionCount *int32) *appsv1.ControllerRevision {
	hash := Hash(data, collisionCount)
	l := make(map[string]string, len(labels)+1)
	maps.Copy(l, labels)
	l[HashLabel] = hash
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name:            Name(owner.GetName(), hash),
			Namespace:       owner.GetNamespace(),
			Labels:          l,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, ownerKind)},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: revision,
	}
}

// Sort sorts revisions by Revision, then creation time, then name (stable),
// as Kubernetes does: the last is the newest.
func Sort(revisions []*appsv1.ControllerRevision) {
	sort.SliceStable(revisions, func(i, j int) bool {
		a, b := revisions[i], revisions[j]
		if a.Revision != b.Revision {
			return a.Revision < b.Revision
		}
		if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.Name < b.Name
		}
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	})
}

// Equal reports whether a and b hold the same data (both nil counts as
// equal).
func Equal(a, b *appsv1.ControllerRevision) bool {
	if a == nil || b == nil {
		return a == b
	}
	return bytes.Equal(a.Data.Raw, b.Data.Raw)
}

// FindEqual returns the revisions (in their order) that hold needle's data.
func FindEqual(revisions []*appsv1.ControllerRevision, needle *appsv1.ControllerRevision) []*appsv1.ControllerRevision {
	var out []*appsv1.ControllerRevision
	for _, r := range revisions {
		if Equal(r, needle) {
			out = append(out, r)
		}
	}
	return out
}

// Next returns the number of the next revision: 1 when there is none,
// otherwise one more than the last of sorted (see Sort).
func Next(sorted []*appsv1.ControllerRevision) int64 {
	if len(sorted) == 0 {
		return 1
	}
	return sorted[len(sorted)-1].Revision + 1
}
