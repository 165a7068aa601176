package printers

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The columns kube-apiserver prints for volumes, claims, quotas and limit
// ranges.

var persistentVolumeColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Capacity", "string", "The capacity of the volume."),
	column("Access Modes", "string", "The ways the volume can be mounted."),
	column("Reclaim Policy", "string", "What happens to the volume when its claim is released."),
	column("Status", "string", "The phase of the volume."),
	column("Claim", "string", "The claim bound to the volume."),
	column("StorageClass", "string", "StorageClass of the pv"),
	column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
	column("Reason", "string", "Why the volume is in its phase."),
	ageColumn,
	wide("VolumeMode", "string", "Whether the volume is a filesystem or a raw block device."),
}

func persistentVolumeCells(pv *corev1.PersistentVolume, now time.Time) []interface{} {
	claim := ""
	if r := pv.Spec.ClaimRef; r != nil {
		claim = r.Namespace + "/" + r.Name
	}
	phase := string(pv.Status.Phase)
	if pv.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	class := pv.Spec.StorageClassName
	if c, ok := pv.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		class = c
	}
	capacity := pv.Spec.Capacity[corev1.ResourceStorage]
	return []interface{}{
		pv.Name, capacity.String(), accessModes(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
		phase, claim, class, orUnset(pv.Spec.VolumeAttributesClassName), pv.Status.Reason,
		age(pv.CreationTimestamp, now), volumeMode(pv.Spec.VolumeMode),
	}
}

var persistentVolumeClaimColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Status", "string", "The phase of the claim."),
	column("Volume", "string", "The volume bound to the claim."),
	column("Capacity", "string", "The capacity of the bound volume."),
	column("Access Modes", "string", "The ways the bound volume can be mounted."),
	column("StorageClass", "string", "StorageClass of the pvc"),
	column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
	ageColumn,
	wide("VolumeMode", "string", "Whether the claim asks for a filesystem or a raw block device."),
}

func persistentVolumeClaimCells(c *corev1.PersistentVolumeClaim, now time.Time) []interface{} {
	phase := string(c.Status.Phase)
	if c.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	capacity, modes := "", ""
	if c.Spec.VolumeName != "" {
		modes = accessModes(c.Status.AccessModes)
		q := c.Status.Capacity[corev1.ResourceStorage]
		capacity = q.String()
	}
	class := ""
	if cl, ok := c.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		class = cl
	} else if c.Spec.StorageClassName != nil {
		class = *c.Spec.StorageClassName
	}
	return []interface{}{
		c.Name, phase, c.Spec.VolumeName, capacity, modes, class, orUnset(c.Spec.VolumeAttributesClassName),
		age(c.CreationTimestamp, now), volumeMode(c.Spec.VolumeMode),
	}
}

// accessModes renders access modes as kubectl does: RWO,ROX,RWX,RWOP, in
// that order, each once.
func accessModes(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{
		{corev1.ReadWriteOnce, "RWO"}, {corev1.ReadOnlyMany, "ROX"},
		{corev1.ReadWriteMany, "RWX"}, {corev1.ReadWriteOncePod, "RWOP"},
	} {
		for _, have := range modes {
			if have == m.mode {
				out = append(out, m.short)
				break
			}
		}
	}
	return strings.Join(out, ",")
}

func orUnset(s *string) string {
	if s == nil {
		return "<unset>"
	}
	return *s
}

func volumeMode(m *corev1.PersistentVolumeMode) string {
	if m == nil {
		return "<unset>"
	}
	return string(*m)
}

var resourceQuotaColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Request", "string", "Request represents a minimum amount of cpu/memory that a container may consume."),
	column("Limit", "string", "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
	ageColumn,
}

// resourceQuotaCells renders "name: used/hard" for each resource of
// status.hard, sorted, the limits.* ones in LIMIT and the others in
// REQUEST.
func resourceQuotaCells(q *corev1.ResourceQuota, now time.Time) []interface{} {
	names := make([]string, 0, len(q.Status.Hard))
	for name := range q.Status.Hard {
		names = append(names, string(name))
	}
	sort.Strings(names)
	var requests, limits []string
	for _, name := range names {
		used, hard := q.Status.Used[corev1.ResourceName(name)], q.Status.Hard[corev1.ResourceName(name)]
		s := fmt.Sprintf("%s: %s/%s", name, used.String(), hard.String())
		if parts := strings.Split(name, "."); len(parts) > 1 && parts[0] == "limits" {
			limits = append(limits, s)
		} else {
			requests = append(requests, s)
		}
	}
	return []interface{}{q.Name, strings.Join(requests, ", "), strings.Join(limits, ", "), age(q.CreationTimestamp, now)}
}
