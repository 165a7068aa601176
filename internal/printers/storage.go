package printers

import (
	"fmt"
	"strings"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// storageTable returns the table of a storage.k8s.io/v1 kind, nil for
// none.
func storageTable(kind string, now func() time.Time) registry.TableConvertor {
	switch kind {
	case "StorageClass":
		return &storageClassTable{newTable(storageClassColumns, func(sc *storagev1.StorageClass, now time.Time) []interface{} {
			return storageClassCells(sc, "", now)
		}, now)}
	case "CSIDriver":
		return newTable(csiDriverColumns, csiDriverCells, now)
	case "CSINode":
		return newTable(csiNodeColumns, func(n *storagev1.CSINode, now time.Time) []interface{} {
			return []interface{}{n.Name, int64(len(n.Spec.Drivers)), age(n.CreationTimestamp, now)}
		}, now)
	case "CSIStorageCapacity":
		return createdAtTable[*storagev1.CSIStorageCapacity](now)
	case "VolumeAttachment":
		return newTable(volumeAttachmentColumns, volumeAttachmentCells, now)
	case "VolumeAttributesClass":
		return newTable(volumeAttributesClassColumns, func(c *storagev1.VolumeAttributesClass, now time.Time) []interface{} {
			return []interface{}{c.Name, c.DriverName, age(c.CreationTimestamp, now)}
		}, now)
	}
	return nil
}

var storageClassColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Provisioner", "string", "The name of the volume plugin that provisions volumes of the class."),
	column("ReclaimPolicy", "string", "What happens to volumes of the class when they are released."),
	column("VolumeBindingMode", "string", "When volumes are provisioned and bound."),
	column("AllowVolumeExpansion", "string", "Whether volumes of the class may be expanded."),
	ageColumn,
}

// storageClassTable marks the effective default class of a list: the
// newest one annotated as default (ties: the first name), as
// kube-apiserver does; a single object has no mark.
type storageClassTable struct {
	*table[*storagev1.StorageClass]
}

func (t *storageClassTable) ListCells(items []runtime.Object) ([][]interface{}, error) {
	classes := make([]*storagev1.StorageClass, len(items))
	var def *storagev1.StorageClass
	for i, item := range items {
		sc, ok := item.(*storagev1.StorageClass)
		if !ok {
			return nil, fmt.Errorf("printers: cannot print %T as a StorageClass", item)
		}
		classes[i] = sc
		if !isDefaultClass(sc) {
			continue
		}
		switch {
		case def == nil, sc.CreationTimestamp.After(def.CreationTimestamp.Time):
			def = sc
		case sc.CreationTimestamp.Equal(&def.CreationTimestamp) && sc.Name < def.Name:
			def = sc
		}
	}
	name := ""
	if def != nil {
		name = def.Name
	}
	now := t.now()
	out := make([][]interface{}, len(classes))
	for i, sc := range classes {
		out[i] = storageClassCells(sc, name, now)
	}
	return out, nil
}

func isDefaultClass(sc *storagev1.StorageClass) bool {
	return sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" ||
		sc.Annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true"
}

func storageClassCells(sc *storagev1.StorageClass, effectiveDefault string, now time.Time) []interface{} {
	name := sc.Name
	if effectiveDefault != "" && name == effectiveDefault {
		name += " (default)"
	}
	reclaim, binding := "Delete", "Immediate"
	if sc.ReclaimPolicy != nil {
		reclaim = string(*sc.ReclaimPolicy)
	}
	if sc.VolumeBindingMode != nil {
		binding = string(*sc.VolumeBindingMode)
	}
	expansion := sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
	return []interface{}{name, sc.Provisioner, reclaim, binding, expansion, age(sc.CreationTimestamp, now)}
}

var csiDriverColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("AttachRequired", "boolean", "Whether the driver needs an attach operation."),
	column("PodInfoOnMount", "boolean", "Whether the driver needs pod information on mount."),
	column("StorageCapacity", "boolean", "Whether the driver reports storage capacity."),
	column("TokenRequests", "string", "The audiences of the service account tokens the driver gets."),
	column("RequiresRepublish", "boolean", "Whether NodePublishVolume is called periodically."),
	column("Modes", "string", "The volume lifecycle modes the driver supports."),
	ageColumn,
}

func csiDriverCells(d *storagev1.CSIDriver, now time.Time) []interface{} {
	s := &d.Spec
	tokens := "<unset>"
	if s.TokenRequests != nil {
		audiences := make([]string, len(s.TokenRequests))
		for i, r := range s.TokenRequests {
			audiences[i] = r.Audience
		}
		tokens = strings.Join(audiences, ",")
	}
	modes := make([]string, len(s.VolumeLifecycleModes))
	for i, m := range s.VolumeLifecycleModes {
		modes[i] = string(m)
	}
	return []interface{}{
		d.Name, s.AttachRequired == nil || *s.AttachRequired, boolOr(s.PodInfoOnMount), boolOr(s.StorageCapacity),
		tokens, boolOr(s.RequiresRepublish), orNone(strings.Join(modes, ",")), age(d.CreationTimestamp, now),
	}
}

// boolOr is an optional bool, false when unset.
func boolOr(b *bool) bool { return b != nil && *b }

var csiNodeColumns = []metav1.TableColumnDefinition{
	nameColumn(0), column("Drivers", "integer", "The number of CSI drivers on the node."), ageColumn,
}

var volumeAttachmentColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	{Name: "Attacher", Type: "string", Format: "name", Description: "The name of the volume driver that handles the attachment."},
	column("PV", "string", "The persistent volume to attach."),
	column("Node", "string", "The node the volume is attached to."),
	column("Attached", "boolean", "Whether the volume is attached."),
	ageColumn,
}

func volumeAttachmentCells(va *storagev1.VolumeAttachment, now time.Time) []interface{} {
	pv := ""
	if va.Spec.Source.PersistentVolumeName != nil {
		pv = *va.Spec.Source.PersistentVolumeName
	}
	return []interface{}{va.Name, va.Spec.Attacher, pv, va.Spec.NodeName, va.Status.Attached, age(va.CreationTimestamp, now)}
}

var volumeAttributesClassColumns = []metav1.TableColumnDefinition{
	nameColumn(0), column("DriverName", "string", "The name of the CSI driver of the class."), ageColumn,
}
