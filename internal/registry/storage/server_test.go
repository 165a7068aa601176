package storage_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry/apitest"
)

// The answers below are kube-apiserver v1.37.2's to the same requests.

const (
	base       = "/apis/storage.k8s.io/v1/"
	dnsMsg     = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
	namePart   = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
	invalid    = metav1.StatusReasonInvalid
	unprocess  = http.StatusUnprocessableEntity
	scValid    = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast, annotations: {storageclass.kubernetes.io/is-default-class: \"true\"}}\nprovisioner: example.com/foo\n"
	vaValid    = "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: va}\nspec: {attacher: csi.example.com, nodeName: node-1, source: {persistentVolumeName: pv-1}}\nstatus: {attached: true}\n"
	nodeValid  = "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: node-1}\nspec:\n  drivers: [{name: csi.example.com, nodeID: n1, topologyKeys: [topology.example.com/zone], allocatable: {count: 5}}]\n"
	capValid   = "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: cap, namespace: default}\nstorageClassName: fast\ncapacity: 10Gi\nmaximumVolumeSize: 5Gi\nnodeTopology: {matchLabels: {zone: a}}\n"
	vacValid   = "apiVersion: storage.k8s.io/v1\nkind: VolumeAttributesClass\nmetadata: {name: gold}\ndriverName: csi.example.com\nparameters: {iops: \"100\"}\n"
	drvValid   = "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: csi.example.com}\nspec: {}\n"
	capPath    = base + "namespaces/default/csistoragecapacities"
	vaStatus   = base + "volumeattachments/va/status"
	immutableN = "field is immutable"
)

func TestStorageKindsOverHTTP(t *testing.T) {
	s := apitest.Start(t)
	// Valid objects, stored with kube-apiserver's defaults.
	apitest.ExpectStored(t, s.Create(t, base+"storageclasses", scValid), `{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"annotations":{"storageclass.kubernetes.io/is-default-class":"true"},"name":"fast"},"provisioner":"example.com/foo","reclaimPolicy":"Delete","volumeBindingMode":"Immediate"}`)
	apitest.ExpectStored(t, s.Create(t, base+"csidrivers", drvValid), `{"apiVersion":"storage.k8s.io/v1","kind":"CSIDriver","metadata":{"name":"csi.example.com"},"spec":{"attachRequired":true,"fsGroupPolicy":"ReadWriteOnceWithFSType","podInfoOnMount":false,"preventPodSchedulingIfMissing":false,"requiresRepublish":false,"seLinuxMount":false,"storageCapacity":false,"volumeLifecycleModes":["Persistent"]}}`)
	apitest.ExpectStored(t, s.Create(t, base+"csinodes", nodeValid), `{"apiVersion":"storage.k8s.io/v1","kind":"CSINode","metadata":{"name":"node-1"},"spec":{"drivers":[{"allocatable":{"count":5},"name":"csi.example.com","nodeID":"n1","topologyKeys":["topology.example.com/zone"]}]},"status":{}}`)
	apitest.ExpectStored(t, s.Create(t, capPath, capValid), `{"apiVersion":"storage.k8s.io/v1","capacity":"10Gi","kind":"CSIStorageCapacity","maximumVolumeSize":"5Gi","metadata":{"name":"cap","namespace":"default"},"nodeTopology":{"matchLabels":{"zone":"a"}},"storageClassName":"fast"}`)
	apitest.ExpectStored(t, s.Create(t, base+"volumeattachments", vaValid), `{"apiVersion":"storage.k8s.io/v1","kind":"VolumeAttachment","metadata":{"name":"va"},"spec":{"attacher":"csi.example.com","nodeName":"node-1","source":{"persistentVolumeName":"pv-1"}},"status":{"attached":false}}`)
	apitest.ExpectStored(t, s.Create(t, base+"volumeattributesclasses", vacValid), `{"apiVersion":"storage.k8s.io/v1","driverName":"csi.example.com","kind":"VolumeAttributesClass","metadata":{"name":"gold"},"parameters":{"iops":"100"}}`)

	s.Reject(t, base+"storageclasses", []apitest.Rejection{{
		Name: "class: bad name, policies, no provisioner",
		Path: base + "storageclasses", Body: "{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: Bad_Name}, reclaimPolicy: Recycle, volumeBindingMode: Later}",
		Code: unprocess, Reason: invalid,
		Message: `StorageClass.storage.k8s.io "Bad_Name" is invalid: [metadata.name: Invalid value: "Bad_Name": ` + dnsMsg + `, reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain", volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer", provisioner: Required value]`,
		Causes:  []string{"metadata.name:FieldValueInvalid", "reclaimPolicy:FieldValueNotSupported", "volumeBindingMode:FieldValueNotSupported", "provisioner:FieldValueRequired"},
	}, {
		Name: "class: bad provisioner, empty parameter key, topologies",
		Path: base + "storageclasses",
		Body: `{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: sc2}, provisioner: "bad provisioner!", parameters: {"": "x"},
  allowedTopologies: [{matchLabelExpressions: [{key: zone, values: [a]}, {key: zone, values: [b]}]}, {matchLabelExpressions: [{key: "", values: []}]}]}`,
		Code: unprocess, Reason: invalid,
		Message: `StorageClass.storage.k8s.io "sc2" is invalid: [provisioner: Invalid value: "bad provisioner!": ` + namePart + `, parameters: Invalid value: "": field can not be empty., allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value: "zone", allowedTopologies[1].matchLabelExpressions[0].values: Required value, allowedTopologies[1].matchLabelExpressions[0].key: Invalid value: "": name part must be non-empty, allowedTopologies[1].matchLabelExpressions[0].key: Invalid value: "": ` + namePart + `]`,
		Causes: []string{"provisioner:FieldValueInvalid", "parameters:FieldValueInvalid", "allowedTopologies[0].matchLabelExpressions[1].key:FieldValueDuplicate",
			"allowedTopologies[1].matchLabelExpressions[0].values:FieldValueRequired", "allowedTopologies[1].matchLabelExpressions[0].key:FieldValueInvalid", "allowedTopologies[1].matchLabelExpressions[0].key:FieldValueInvalid"},
	}, {
		// As kube-apiserver: an empty term repeats the empty terms its
		// check starts with; a term is reported once.
		Name: "class: empty topology terms",
		Path: base + "storageclasses",
		Body: `{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: sc3}, provisioner: example.com/foo, allowedTopologies: [{}, {}]}`,
		Code: unprocess, Reason: invalid,
		Message: `StorageClass.storage.k8s.io "sc3" is invalid: [allowedTopologies[0].matchLabelExpressions: Duplicate value: "", allowedTopologies[1].matchLabelExpressions: Duplicate value: ""]`,
		Causes:  []string{"allowedTopologies[0].matchLabelExpressions:FieldValueDuplicate", "allowedTopologies[1].matchLabelExpressions:FieldValueDuplicate"},
	}, {
		Name: "class: immutable fields", Method: "PUT", Path: base + "storageclasses/fast",
		Mutate: func(o map[string]any) {
			o["provisioner"], o["parameters"], o["reclaimPolicy"], o["volumeBindingMode"] = "example.com/bar", map[string]any{"a": "b"}, "Retain", "WaitForFirstConsumer"
		},
		Code: unprocess, Reason: invalid,
		Message: `StorageClass.storage.k8s.io "fast" is invalid: [provisioner: Invalid value: null: field is immutable, parameters: Invalid value: null: field is immutable, reclaimPolicy: Invalid value: null: field is immutable, volumeBindingMode: Invalid value: null: field is immutable]`,
		Causes:  []string{"provisioner:FieldValueInvalid", "parameters:FieldValueInvalid", "reclaimPolicy:FieldValueInvalid", "volumeBindingMode:FieldValueInvalid"},
	}})

	s.Reject(t, base+"csidrivers", []apitest.Rejection{{
		Name: "driver: enums, token requests, update period",
		Path: base + "csidrivers",
		Body: `{apiVersion: storage.k8s.io/v1, kind: CSIDriver, metadata: {name: bad.example.com}, spec: {fsGroupPolicy: Weird, volumeLifecycleModes: [Persistent, Sometimes],
  tokenRequests: [{audience: a, expirationSeconds: 60}, {audience: a}], nodeAllocatableUpdatePeriodSeconds: 5}}`,
		Code: unprocess, Reason: invalid,
		Message: `CSIDriver.storage.k8s.io "bad.example.com" is invalid: [spec.fsGroupPolicy: Unsupported value: "Weird": supported values: "File", "None", "ReadWriteOnceWithFSType", spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes, spec.tokenRequests[1].audience: Duplicate value: "a", spec.volumeLifecycleModes: Unsupported value: "Sometimes": supported values: "Persistent", "Ephemeral", spec.nodeAllocatableUpdatePeriodSeconds: Invalid value: 5: must be greater than or equal to 10 seconds]`,
		Causes: []string{"spec.fsGroupPolicy:FieldValueNotSupported", "spec.tokenRequests[0].expirationSeconds:FieldValueInvalid", "spec.tokenRequests[1].audience:FieldValueDuplicate",
			"spec.volumeLifecycleModes:FieldValueNotSupported", "spec.nodeAllocatableUpdatePeriodSeconds:FieldValueInvalid"},
	}, {
		Name: "driver: token secrets without token requests", Path: base + "csidrivers",
		Body: "{apiVersion: storage.k8s.io/v1, kind: CSIDriver, metadata: {name: bad2.example.com}, spec: {serviceAccountTokenInSecrets: true}}",
		Code: unprocess, Reason: invalid,
		Message: `CSIDriver.storage.k8s.io "bad2.example.com" is invalid: spec.serviceAccountTokenInSecrets: Invalid value: true: serviceAccountTokenInSecrets is set but no tokenRequests are specified`,
		Causes:  []string{"spec.serviceAccountTokenInSecrets:FieldValueInvalid"},
	}, {
		Name: "driver: immutable fields", Method: "PUT", Path: base + "csidrivers/csi.example.com",
		Mutate: func(o map[string]any) {
			spec := o["spec"].(map[string]any)
			spec["attachRequired"], spec["volumeLifecycleModes"], spec["podInfoOnMount"] = false, []any{"Ephemeral"}, true
		},
		Code: unprocess, Reason: invalid,
		Message: `CSIDriver.storage.k8s.io "csi.example.com" is invalid: [spec.attachedRequired: Invalid value: false: field is immutable, spec.volumeLifecycleModes: Invalid value: ["Ephemeral"]: field is immutable]`,
		Causes:  []string{"spec.attachedRequired:FieldValueInvalid", "spec.volumeLifecycleModes:FieldValueInvalid"},
	}})

	s.Reject(t, base+"csinodes", []apitest.Rejection{{
		Name: "node: drivers", Path: base + "csinodes",
		Body: `{apiVersion: storage.k8s.io/v1, kind: CSINode, metadata: {name: node-2}, spec: {drivers: [
  {name: Bad_Driver, nodeID: "", topologyKeys: ["", "a b"], allocatable: {count: -1}}, {name: Bad_Driver, nodeID: x}]}}`,
		Code: unprocess, Reason: invalid,
		Message: `CSINode.storage.k8s.io "node-2" is invalid: [spec.drivers[0].name: Invalid value: "Bad_Driver": ` + dnsMsg + `, spec.drivers[0].nodeID: Required value, spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0, spec.drivers[0]: Required value, spec.drivers[0]: Invalid value: "": name part must be non-empty, spec.drivers[0]: Invalid value: "": ` + namePart + `, spec.drivers[0]: Invalid value: "a b": ` + namePart + `, spec.drivers[1].name: Invalid value: "Bad_Driver": ` + dnsMsg + `, spec.drivers[1].name: Duplicate value: "Bad_Driver"]`,
		Causes: []string{"spec.drivers[0].name:FieldValueInvalid", "spec.drivers[0].nodeID:FieldValueRequired", "spec.drivers[0].allocatable.count:FieldValueInvalid",
			"spec.drivers[0]:FieldValueRequired", "spec.drivers[0]:FieldValueInvalid", "spec.drivers[0]:FieldValueInvalid", "spec.drivers[0]:FieldValueInvalid",
			"spec.drivers[1].name:FieldValueInvalid", "spec.drivers[1].name:FieldValueDuplicate"},
	}, {
		Name: "node: a driver's node ID is immutable", Method: "PUT", Path: base + "csinodes/node-1",
		Mutate: func(o map[string]any) {
			d := o["spec"].(map[string]any)["drivers"].([]any)[0].(map[string]any)
			d["nodeID"], d["allocatable"] = "n2", map[string]any{"count": 7}
		},
		Code: unprocess, Reason: invalid,
		Message: `CSINode.storage.k8s.io "node-1" is invalid: spec.drivers: Invalid value: {"Name":"csi.example.com","NodeID":"n2","TopologyKeys":["topology.example.com/zone"],"Allocatable":null}: field is immutable`,
		Causes:  []string{"spec.drivers:FieldValueInvalid"},
	}})

	s.Reject(t, capPath, []apitest.Rejection{{
		Name: "capacity: topology, class, negative", Path: capPath,
		Body: `{apiVersion: storage.k8s.io/v1, kind: CSIStorageCapacity, metadata: {name: cap2}, storageClassName: Bad_SC, capacity: "-1", nodeTopology: {matchLabels: {"bad key!": a}}}`,
		Code: unprocess, Reason: invalid,
		Message: `CSIStorageCapacity.storage.k8s.io "cap2" is invalid: [nodeTopology.matchLabels: Invalid value: "bad key!": ` + namePart + `, storageClassName: Invalid value: "Bad_SC": ` + dnsMsg + `, capacity: Invalid value: "-1": must be greater than or equal to 0]`,
		Causes:  []string{"nodeTopology.matchLabels:FieldValueInvalid", "storageClassName:FieldValueInvalid", "capacity:FieldValueInvalid"},
	}, {
		Name: "capacity: no class", Path: capPath,
		Body: `{apiVersion: storage.k8s.io/v1, kind: CSIStorageCapacity, metadata: {name: cap3}}`,
		Code: unprocess, Reason: invalid,
		Message: `CSIStorageCapacity.storage.k8s.io "cap3" is invalid: storageClassName: Invalid value: "": ` + dnsMsg,
		Causes:  []string{"storageClassName:FieldValueInvalid"},
	}, {
		Name: "capacity: immutable inputs", Method: "PUT", Path: capPath + "/cap",
		Mutate: func(o map[string]any) {
			o["storageClassName"], o["nodeTopology"], o["capacity"] = "other", map[string]any{"matchLabels": map[string]any{"zone": "b"}}, "20Gi"
		},
		Code: unprocess, Reason: invalid,
		Message: `CSIStorageCapacity.storage.k8s.io "cap" is invalid: [nodeTopology: Invalid value: {"matchLabels":{"zone":"b"}}: field is immutable, storageClassName: Invalid value: "other": field is immutable]`,
		Causes:  []string{"nodeTopology:FieldValueInvalid", "storageClassName:FieldValueInvalid"},
	}})

	s.Reject(t, base+"volumeattachments", []apitest.Rejection{{
		Name: "attachment: no source, bad node, no attacher", Path: base + "volumeattachments",
		Body: `{apiVersion: storage.k8s.io/v1, kind: VolumeAttachment, metadata: {name: va2}, spec: {attacher: "", nodeName: Bad_Node, source: {}}}`,
		Code: unprocess, Reason: invalid,
		Message: `VolumeAttachment.storage.k8s.io "va2" is invalid: [spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName, spec.nodeName: Invalid value: "Bad_Node": ` + dnsMsg + `, spec.attacher: Required value]`,
		Causes:  []string{"spec.source:FieldValueRequired", "spec.nodeName:FieldValueInvalid", "spec.attacher:FieldValueRequired"},
	}, {
		Name: "attachment: both sources", Path: base + "volumeattachments",
		Body: `{apiVersion: storage.k8s.io/v1, kind: VolumeAttachment, metadata: {name: va3}, spec: {attacher: a.b, nodeName: node-x, source: {persistentVolumeName: "", inlineVolumeSpec: {csi: {driver: x, volumeHandle: h}}}}}`,
		Code: unprocess, Reason: invalid,
		Message: `VolumeAttachment.storage.k8s.io "va3" is invalid: [spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName, spec.source.persistentVolumeName: Invalid value: "": ` + dnsMsg + `]`,
		Causes:  []string{"spec.source:FieldValueForbidden", "spec.source.persistentVolumeName:FieldValueInvalid"},
	}, {
		Name: "attachment: empty volume name", Path: base + "volumeattachments",
		Body: `{apiVersion: storage.k8s.io/v1, kind: VolumeAttachment, metadata: {name: va4}, spec: {attacher: a.b, nodeName: node-x, source: {persistentVolumeName: ""}}}`,
		Code: unprocess, Reason: invalid,
		Message: `VolumeAttachment.storage.k8s.io "va4" is invalid: [spec.source.persistentVolumeName: Required value: must specify non empty persistentVolumeName, spec.source.persistentVolumeName: Invalid value: "": ` + dnsMsg + `]`,
		Causes:  []string{"spec.source.persistentVolumeName:FieldValueRequired", "spec.source.persistentVolumeName:FieldValueInvalid"},
	}, {
		Name: "attachment: spec is immutable", Method: "PUT", Path: base + "volumeattachments/va",
		Mutate: func(o map[string]any) { o["spec"].(map[string]any)["nodeName"] = "node-2" },
		Code:   unprocess, Reason: invalid,
		Message: `VolumeAttachment.storage.k8s.io "va" is invalid: spec: Invalid value: null: field is immutable`,
		Causes:  []string{"spec:FieldValueInvalid"},
	}, {
		Name: "attachment status: negative error code", Method: "PUT", Path: vaStatus,
		Mutate: func(o map[string]any) {
			o["status"] = map[string]any{"attached": true, "attachError": map[string]any{"message": "x", "errorCode": -1}}
		},
		Code: unprocess, Reason: invalid,
		Message: `VolumeAttachment.storage.k8s.io "va" is invalid: status.attachError.errorCode: Invalid value: -1: must be between 0 and 2147483647, inclusive`,
		Causes:  []string{"status.attachError.errorCode:FieldValueInvalid"},
	}})

	s.Reject(t, base+"volumeattributesclasses", []apitest.Rejection{{
		Name: "attributes class: no driver, no parameters", Path: base + "volumeattributesclasses",
		Body: `{apiVersion: storage.k8s.io/v1, kind: VolumeAttributesClass, metadata: {name: vac2}, driverName: ""}`,
		Code: unprocess, Reason: invalid,
		Message: `VolumeAttributesClass.storage.k8s.io "vac2" is invalid: [driverName: Required value, parameters: Required value: must contain at least one key/value pair]`,
		Causes:  []string{"driverName:FieldValueRequired", "parameters:FieldValueRequired"},
	}, {
		Name: "attributes class: driver and parameters are fixed", Method: "PUT", Path: base + "volumeattributesclasses/gold",
		Mutate: func(o map[string]any) {
			o["driverName"], o["parameters"] = "other.example.com", map[string]any{"iops": "200"}
		},
		Code: unprocess, Reason: invalid,
		Message: `VolumeAttributesClass.storage.k8s.io "gold" is invalid: [driverName: Forbidden: updates to driverName are forbidden., parameters: Forbidden: updates to parameters are forbidden.]`,
		Causes:  []string{"driverName:FieldValueForbidden", "parameters:FieldValueForbidden"},
	}})

	// A PUT must name a resourceVersion for these kinds (not for storage
	// classes); a patch need not.
	noRV := func(o map[string]any) { delete(o["metadata"].(map[string]any), "resourceVersion") }
	s.Reject(t, "", []apitest.Rejection{{
		Name: "driver: unconditional update", Method: "PUT", Path: base + "csidrivers/csi.example.com", Mutate: noRV,
		Code: unprocess, Reason: invalid,
		Message: `csidrivers.storage.k8s.io "csi.example.com" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`,
		Causes:  []string{"metadata.resourceVersion:FieldValueInvalid"},
	}, {
		Name: "attachment status: unconditional update", Method: "PUT", Path: vaStatus, Mutate: noRV,
		Code: unprocess, Reason: invalid,
		Message: `volumeattachments.storage.k8s.io "va" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`,
		Causes:  []string{"metadata.resourceVersion:FieldValueInvalid"},
	}})
	sc := s.GetMap(t, base+"storageclasses/fast")
	noRV(sc)
	sc["allowVolumeExpansion"] = true
	if code, out := s.Write(t, "PUT", base+"storageclasses/fast", sc); code != http.StatusOK {
		t.Errorf("unconditional storage class update: %d %v", code, out)
	}
	if code, out, _ := s.Do(t, "PATCH", base+"csidrivers/csi.example.com", "application/merge-patch+json",
		strings.NewReader(`{"metadata":{"labels":{"a":"b"}}}`)); code != http.StatusOK {
		t.Errorf("patch without resourceVersion: %d %s", code, out)
	}

	// Updates kube-apiserver accepts, and the status subresource.
	code, out := s.Write(t, "PUT", vaStatus, withStatus(s.GetMap(t, base+"volumeattachments/va"), map[string]any{"attached": true}))
	if code != http.StatusOK || out["status"].(map[string]any)["attached"] != true {
		t.Errorf("status update: %d %v", code, out)
	}
	drv := s.GetMap(t, base+"csidrivers/csi.example.com")
	drv["spec"].(map[string]any)["podInfoOnMount"] = true
	if code, out := s.Write(t, "PUT", base+"csidrivers/csi.example.com", drv); code != http.StatusOK || out["metadata"].(map[string]any)["generation"] != 1.0 {
		t.Errorf("driver update: %d %v (want generation 1 after the first spec change)", code, out)
	}
	node := s.GetMap(t, base+"csinodes/node-1")
	node["spec"].(map[string]any)["drivers"].([]any)[0].(map[string]any)["allocatable"] = map[string]any{"count": 7}
	if code, out := s.Write(t, "PUT", base+"csinodes/node-1", node); code != http.StatusOK {
		t.Errorf("node allocatable update: %d %v", code, out)
	}

	// Printers.
	s.Create(t, base+"storageclasses", "{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: slow}, provisioner: example.com/foo, reclaimPolicy: Retain, volumeBindingMode: WaitForFirstConsumer, allowVolumeExpansion: true}")
	for _, c := range []struct {
		path string
		cols []string
		row0 []any
	}{
		{base + "storageclasses", []string{"Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"},
			[]any{"fast (default)", "example.com/foo", "Delete", "Immediate", true}},
		{base + "storageclasses/fast", nil, []any{"fast", "example.com/foo", "Delete", "Immediate", true}},
		{base + "csidrivers", []string{"Name", "AttachRequired", "PodInfoOnMount", "StorageCapacity", "TokenRequests", "RequiresRepublish", "Modes", "Age"},
			[]any{"csi.example.com", true, true, false, "<unset>", false, "Persistent"}},
		{base + "csinodes", []string{"Name", "Drivers", "Age"}, []any{"node-1", 1.0}},
		{capPath, []string{"Name", "Created At"}, []any{"cap"}},
		{base + "volumeattachments", []string{"Name", "Attacher", "PV", "Node", "Attached", "Age"}, []any{"va", "csi.example.com", "pv-1", "node-1", true}},
		{base + "volumeattributesclasses", []string{"Name", "DriverName", "Age"}, []any{"gold", "csi.example.com"}},
	} {
		cols, rows := s.Table(t, c.path)
		if c.cols != nil && !reflect.DeepEqual(cols, c.cols) {
			t.Errorf("%s: columns %q, want %q", c.path, cols, c.cols)
		}
		if len(rows) == 0 || !reflect.DeepEqual(rows[0][:len(c.row0)], c.row0) {
			t.Errorf("%s: rows %v, want first %v", c.path, rows, c.row0)
		}
	}
	if _, rows := s.Table(t, base+"storageclasses"); len(rows) != 2 || rows[1][0] != "slow" || rows[1][2] != "Retain" || rows[1][4] != true {
		t.Errorf("storage classes: %v", rows)
	}
}

func withStatus(obj map[string]any, status map[string]any) map[string]any {
	obj["status"] = status
	return obj
}
