package podutil

import (
	"encoding/binary"
	"hash/fnv"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/dump"
)

// ComputeHash returns the pod-template-hash of template, the value
// Kubernetes computes for the same template and collision count: FNV-32a
// over the template printed by the deep hash printer (k8s.io/utils/dump
// ForHash, the printer Kubernetes' DeepHashObject uses), followed, when
// collisionCount is set, by the count as 8 little-endian bytes of which
// the low 4 carry the value; the 32-bit sum in decimal is then rendered
// with rand.SafeEncodeString. Equal templates give equal hashes, so a
// ReplicaSet named <deployment>-<hash> is found again by name.
func ComputeHash(template *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	// The printer is given the value, not the pointer: its output starts
	// with the type name, which must read v1.PodTemplateSpec.
	_, _ = h.Write([]byte(dump.ForHash(*template)))
	if collisionCount != nil {
		buf := make([]byte, 8)
		binary.LittleEndian.PutUint32(buf, uint32(*collisionCount))
		_, _ = h.Write(buf)
	}
	return rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}
