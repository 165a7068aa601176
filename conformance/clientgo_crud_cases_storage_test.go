package conformance

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func storageCases() []crudCase {
	st := storagev1.SchemeGroupVersion
	return []crudCase{
		{
			gvr: st.WithResource("storageclasses"), kind: "StorageClass",
			newObj: func(n string, l map[string]string) runtime.Object {
				retain, wait := corev1.PersistentVolumeReclaimRetain, storagev1.VolumeBindingWaitForFirstConsumer
				return &storagev1.StorageClass{ObjectMeta: crudMeta(n, l, false), Provisioner: "example.com/crud",
					ReclaimPolicy: &retain, VolumeBindingMode: &wait}
			},
		},
		{
			gvr: st.WithResource("csidrivers"), kind: "CSIDriver",
			newObj: func(n string, l map[string]string) runtime.Object {
				attach := true
				return &storagev1.CSIDriver{ObjectMeta: crudMeta(n, l, false), Spec: storagev1.CSIDriverSpec{AttachRequired: &attach}}
			},
		},
		{
			gvr: st.WithResource("csinodes"), kind: "CSINode",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &storagev1.CSINode{ObjectMeta: crudMeta(n, l, false), Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{
					Name: "crud.csi.example.com", NodeID: n, TopologyKeys: []string{"topology.example.com/zone"}}}}}
			},
			// status.storageHealth is behind the CSIVolumeHealth gate,
			// alpha and off in kube-apiserver v1.37: the write is accepted
			// and the field dropped.
			setStatus: func(o runtime.Object) {
				o.(*storagev1.CSINode).Status.StorageHealth = []storagev1.StorageHealth{{Name: "crud.csi.example.com"}}
			},
			statusSet:         func(o runtime.Object) bool { return len(o.(*storagev1.CSINode).Status.StorageHealth) == 0 },
			statusKeepsLabels: false,
		},
		{
			gvr: st.WithResource("csistoragecapacities"), kind: "CSIStorageCapacity", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				capacity := resource.MustParse("10Gi")
				return &storagev1.CSIStorageCapacity{ObjectMeta: crudMeta(n, l, true), StorageClassName: "crud-none", Capacity: &capacity,
					NodeTopology: &metav1.LabelSelector{MatchLabels: map[string]string{"topology.example.com/zone": "a"}}}
			},
		},
		{
			gvr: st.WithResource("volumeattachments"), kind: "VolumeAttachment",
			newObj: func(n string, l map[string]string) runtime.Object {
				pv := "crud-pv"
				return &storagev1.VolumeAttachment{ObjectMeta: crudMeta(n, l, false), Spec: storagev1.VolumeAttachmentSpec{
					Attacher: "crud.csi.example.com", NodeName: "node-x", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}}}
			},
			setStatus: func(o runtime.Object) { o.(*storagev1.VolumeAttachment).Status.Attached = true },
			statusSet: func(o runtime.Object) bool { return o.(*storagev1.VolumeAttachment).Status.Attached },
		},
		{
			gvr: st.WithResource("volumeattributesclasses"), kind: "VolumeAttributesClass",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &storagev1.VolumeAttributesClass{ObjectMeta: crudMeta(n, l, false), DriverName: "crud.csi.example.com",
					Parameters: map[string]string{"iops": "3000"}}
			},
			protectionFinalizer: "kubernetes.io/vac-protection",
		},
		{
			gvr: svmv1.SchemeGroupVersion.WithResource("storageversionmigrations"), kind: "StorageVersionMigration",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &svmv1.StorageVersionMigration{ObjectMeta: crudMeta(n, l, false), Spec: svmv1.StorageVersionMigrationSpec{
					Resource: metav1.GroupResource{Group: "cg-crud.example.com", Resource: "nothings"}}}
			},
			setStatus: func(o runtime.Object) {
				o.(*svmv1.StorageVersionMigration).Status.Conditions = []metav1.Condition{setByTest()}
			},
			statusSet: func(o runtime.Object) bool { return hasSetByTest(o.(*svmv1.StorageVersionMigration).Status.Conditions) },
		},
	}
}
