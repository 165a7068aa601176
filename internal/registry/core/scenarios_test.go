package core_test

import (
	"net/http"
	"slices"
)

// The scenarios the reference tests replay (reference_test.go). Each
// scenario runs in the same namespace, in order; cluster-scoped names are
// prefixed with the namespace. Bodies avoid what would make
// kube-apiserver's answers vary from run to run (several keys of one map
// with errors: Go's map order), and what other parts of a cluster would
// change before the answer (claims get an explicit class: the reference
// may have a default StorageClass; volumes a class no claim asks for).
type scenario struct {
	name  string
	steps []step
}

const (
	get, post, put, patch, del = http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete
	nsPath                     = "/api/v1/namespaces/{ns}/"
)

var scenarios = []scenario{
	{"bindings", []step{
		{name: "pod p1", method: post, path: nsPath + "pods", body: `{"metadata":{"name":"p1"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`, check: checkCode},
		{name: "pod p2", method: post, path: nsPath + "pods", body: `{"metadata":{"name":"p2"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`, check: checkCode},
		{name: "no target", method: post, path: nsPath + "bindings", body: `{"metadata":{"name":"p2"},"target":{}}`},
		{name: "target kind", method: post, path: nsPath + "bindings", body: `{"metadata":{"name":"p2"},"target":{"kind":"Pod"}}`},
		{name: "node name", method: post, path: nsPath + "bindings", body: `{"metadata":{"name":"p2"},"target":{"name":"Bad_Name"}}`},
		{name: "no name", method: post, path: nsPath + "bindings", body: `{"target":{"name":"n"}}`},
		{name: "no pod", method: post, path: nsPath + "bindings", body: `{"metadata":{"name":"nope"},"target":{"name":"n"}}`},
		{name: "namespace", method: post, path: nsPath + "bindings", body: `{"metadata":{"name":"p2","namespace":"default"},"target":{"name":"n"}}`},
		{name: "subresource name", method: post, path: nsPath + "pods/p2/binding", body: `{"metadata":{"name":"p1"},"target":{"name":"n"}}`},
		{name: "subresource no name", method: post, path: nsPath + "pods/p2/binding", body: `{"target":{"name":"n"}}`},
		{name: "subresource namespace", method: post, path: nsPath + "pods/p2/binding", body: `{"metadata":{"name":"p2","namespace":"default"},"target":{"name":"n"}}`},
		{name: "subresource no target", method: post, path: nsPath + "pods/p2/binding", body: `{"metadata":{"name":"p2"},"target":{}}`},
		{name: "subresource uid", method: post, path: nsPath + "pods/p2/binding", body: `{"metadata":{"name":"p2","uid":"123"},"target":{"name":"n"}}`, check: checkCode},
		{name: "resourceVersion", method: post, path: nsPath + "bindings", body: `{"metadata":{"name":"p2","resourceVersion":"1"},"target":{"name":"n"}}`, check: checkCode},
		{name: "bind, uid ignored", method: post, path: nsPath + "bindings", body: `{"metadata":{"name":"p1","uid":"123","annotations":{"a":"b"},"labels":{"l":"v"}},"target":{"name":"node-1"}}`},
		{name: "bound already", method: post, path: nsPath + "bindings", body: `{"metadata":{"name":"p1"},"target":{"name":"node-2"}}`},
		{name: "dry run", method: post, path: nsPath + "bindings?dryRun=All", body: `{"metadata":{"name":"p2"},"target":{"name":"n"}}`},
		{name: "subresource", method: post, path: nsPath + "pods/p2/binding", body: `{"metadata":{"name":"p2"},"target":{"kind":"Node","name":"n2"}}`},
		{name: "list", method: get, path: nsPath + "bindings"},
		{name: "get", method: get, path: nsPath + "bindings/p1"},
	}},
	{"serviceaccounts", []step{
		{name: "create", method: post, path: nsPath + "serviceaccounts", body: `{"metadata":{"name":"sa1","labels":{"a":"b"}},"secrets":[{"name":"s1","namespace":"other","kind":"Secret","uid":"x"}],"imagePullSecrets":[{"name":"p"}],"automountServiceAccountToken":false}`},
		{name: "name", method: post, path: nsPath + "serviceaccounts", body: `{"metadata":{"name":"Bad_Name"}}`},
		{name: "label", method: put, path: nsPath + "serviceaccounts/sa1", body: `{"metadata":{"name":"sa1","labels":{"a b":"c"}}}`},
		{name: "no create on update", method: put, path: nsPath + "serviceaccounts/sa9", body: `{"metadata":{"name":"sa9"}}`},
		{name: "table", method: get, path: nsPath + "serviceaccounts/sa1", accept: "table"},
		{name: "delete", method: del, path: nsPath + "serviceaccounts/sa1"},
	}},
	{"endpoints", []step{
		{name: "create", method: post, path: nsPath + "endpoints", body: `{"metadata":{"name":"ep1"},"subsets":[{"addresses":[{"ip":"10.1.1.1","hostname":"h","nodeName":"n1"},{"ip":"10.1.1.2"},{"ip":"10.1.1.3"}],"notReadyAddresses":[{"ip":"10.1.1.9"}],"ports":[{"port":80,"name":"http"},{"port":53,"name":"dns","protocol":"UDP","appProtocol":"dns"}]},{"addresses":[{"ip":"10.2.2.2"}]}]}`},
		{name: "addresses and ports", method: post, path: nsPath + "endpoints", body: `{"metadata":{"name":"e-1"},"subsets":[{"addresses":[{"ip":"nope","hostname":"Bad_Host","nodeName":"Bad_Node"},{"ip":"127.0.0.1"},{"ip":"010.1.2.3"},{"ip":"0.0.0.0"},{"ip":"169.254.1.1"},{"ip":"224.0.0.1"},{"ip":"::1"},{"ip":"fe80::1"}],"ports":[{"port":0,"protocol":"ICMP"},{"name":"Bad_Name","port":80,"appProtocol":"a b"}]},{"ports":[{"port":80}]}]}`},
		{name: "port range", method: post, path: nsPath + "endpoints", body: `{"metadata":{"name":"e-2"},"subsets":[{"addresses":[{"ip":"10.0.0.1"}],"ports":[{"port":70000}]}]}`},
		{name: "create on update", method: put, path: nsPath + "endpoints/ep2", body: `{"metadata":{"name":"ep2"},"subsets":[{"notReadyAddresses":[{"ip":"10.0.0.9"}],"ports":[{"port":80}]}]}`},
		{name: "table", method: get, path: nsPath + "endpoints/ep1", accept: "table"},
		{name: "table, not ready", method: get, path: nsPath + "endpoints/ep2", accept: "table"},
		{name: "delete", method: del, path: nsPath + "endpoints/ep2"},
	}},
	{"limitranges", []step{
		{name: "create", method: post, path: nsPath + "limitranges", body: `{"metadata":{"name":"lr1"},"spec":{"limits":[{"type":"Container","max":{"cpu":"2","memory":"1Gi"},"min":{"cpu":"10m"},"maxLimitRequestRatio":{"cpu":"10"}},{"type":"Pod","max":{"cpu":"4"}},{"type":"PersistentVolumeClaim","min":{"storage":"1Gi"},"max":{"storage":"10Gi"}},{"type":"example.com/thing","max":{"example.com/foo":"3"}}]}}`},
		{name: "min over max", method: post, path: nsPath + "limitranges", body: `{"metadata":{"name":"l1"},"spec":{"limits":[{"type":"Container","min":{"cpu":"2"},"max":{"cpu":"1"}}]}}`},
		{name: "default request", method: post, path: nsPath + "limitranges", body: `{"metadata":{"name":"l2"},"spec":{"limits":[{"type":"Container","default":{"cpu":"2"},"defaultRequest":{"cpu":"3"},"max":{"cpu":"4"},"min":{"cpu":"100m"}}]}}`},
		{name: "pod defaults", method: post, path: nsPath + "limitranges", body: `{"metadata":{"name":"l3"},"spec":{"limits":[{"type":"Pod","default":{"cpu":"1"},"defaultRequest":{"cpu":"1"}},{"type":"Pod"}]}}`},
		{name: "types and names", method: post, path: nsPath + "limitranges", body: `{"metadata":{"name":"l4"},"spec":{"limits":[{"type":"PersistentVolumeClaim"},{"type":"Widget"},{"type":"Container","max":{"foo":"1"}},{"type":"a b"}]}}`},
		{name: "ratio", method: post, path: nsPath + "limitranges", body: `{"metadata":{"name":"l5"},"spec":{"limits":[{"type":"Container","maxLimitRequestRatio":{"cpu":"500m"}},{"type":"Pod","min":{"cpu":"100m"},"max":{"cpu":"200m"},"maxLimitRequestRatio":{"cpu":"3"}}]}}`},
		{name: "hugepages", method: post, path: nsPath + "limitranges", body: `{"metadata":{"name":"l6"},"spec":{"limits":[{"type":"Container","default":{"hugepages-2Mi":"2Mi"},"defaultRequest":{"hugepages-2Mi":"4Mi"}}]}}`},
		{name: "min over default", method: post, path: nsPath + "limitranges", body: `{"metadata":{"name":"l7"},"spec":{"limits":[{"type":"Container","min":{"memory":"1Gi"},"default":{"memory":"500Mi"}}]}}`},
		{name: "no name", method: post, path: nsPath + "limitranges", body: `{"spec":{"limits":[{"type":"Pod","max":{"cpu":"1"}}]}}`, check: checkCode},
		{name: "create on update", method: put, path: nsPath + "limitranges/lr2", body: `{"metadata":{"name":"lr2"},"spec":{"limits":[{"type":"Container","default":{"cpu":"100m"}}]}}`},
		{name: "table", method: get, path: nsPath + "limitranges/lr1", accept: "table"},
		{name: "delete", method: del, path: nsPath + "limitranges/lr2"},
	}},
	{"resourcequotas", []step{
		{name: "create", method: post, path: nsPath + "resourcequotas", body: `{"metadata":{"name":"rq1"},"spec":{"hard":{"pods":"10","services":"5","example.com/gpu":"2","configmaps":"1.0"}},"status":{"hard":{"pods":"3"}}}`},
		{name: "selector", method: post, path: nsPath + "resourcequotas", body: `{"metadata":{"name":"rq2"},"spec":{"hard":{"pods":"10"},"scopeSelector":{"matchExpressions":[{"scopeName":"PriorityClass","operator":"In","values":["high"]}]}}}`},
		{name: "not an integer", method: post, path: nsPath + "resourcequotas", body: `{"metadata":{"name":"q1"},"spec":{"hard":{"pods":"1.5"}}}`},
		{name: "negative", method: post, path: nsPath + "resourcequotas", body: `{"metadata":{"name":"q2"},"spec":{"hard":{"cpu":"-1"}}}`},
		{name: "unknown resource", method: post, path: nsPath + "resourcequotas", body: `{"metadata":{"name":"q3"},"spec":{"hard":{"foo":"1"}}}`},
		{name: "resource name", method: post, path: nsPath + "resourcequotas", body: `{"metadata":{"name":"q4"},"spec":{"hard":{"a b":"1"}}}`},
		{name: "scopes", method: post, path: nsPath + "resourcequotas", body: `{"metadata":{"name":"q5"},"spec":{"hard":{"pods":"1","storage":"1Gi"},"scopes":["Terminating","NotTerminating","Weird","BestEffort"]}}`},
		{name: "scope selector", method: post, path: nsPath + "resourcequotas", body: `{"metadata":{"name":"q6"},"spec":{"hard":{"cpu":"1"},"scopeSelector":{"matchExpressions":[{"scopeName":"BestEffort","operator":"In","values":["x"]},{"scopeName":"PriorityClass","operator":"Exists","values":["y"]},{"scopeName":"Nope","operator":"Bad"},{"scopeName":"PriorityClass","operator":"In"}]}}}`},
		{name: "scopes fixed", method: patch, path: nsPath + "resourcequotas/rq2", body: `{"spec":{"scopes":["NotBestEffort"]}}`},
		{name: "status", method: patch, path: nsPath + "resourcequotas/rq2/status", body: `{"status":{"used":{"pods":"1.5"}}}`},
		{name: "delete", method: del, path: nsPath + "resourcequotas/rq1", drop: []string{"status"}},
	}},
	{"podtemplates", []step{
		{name: "create", method: post, path: nsPath + "podtemplates", body: `{"metadata":{"name":"pt1"},"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80}],"readinessProbe":{"httpGet":{"port":80}}}],"volumes":[{"name":"v","configMap":{"name":"cm"}}]}}}`},
		{name: "labels", method: post, path: nsPath + "podtemplates", body: `{"metadata":{"name":"t1"},"template":{"metadata":{"labels":{"a b":"x"},"annotations":{"x y":"1"}},"spec":{"containers":[]}}}`},
		{name: "ephemeral containers", method: post, path: nsPath + "podtemplates", body: `{"metadata":{"name":"t2"},"template":{"spec":{"containers":[{"name":"c","image":"i"}],"ephemeralContainers":[{"name":"e","image":"i"}],"restartPolicy":"Never"}}}`},
		{name: "update", method: patch, path: nsPath + "podtemplates/pt1", body: `{"template":{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}}`},
		{name: "table", method: get, path: nsPath + "podtemplates/pt1", accept: "table"},
		{name: "delete", method: del, path: nsPath + "podtemplates/pt1"},
	}},
	{"replicationcontrollers", []step{
		{name: "create", method: post, path: nsPath + "replicationcontrollers", body: `{"metadata":{"name":"rc1"},"spec":{"replicas":0,"template":{"metadata":{"labels":{"app":"rc1","tier":"web"}},"spec":{"containers":[{"name":"c","image":"nginx:1.25"}]}}}}`},
		{name: "create with selector", method: post, path: nsPath + "replicationcontrollers", body: `{"metadata":{"name":"rc2","labels":{"own":"label"}},"spec":{"replicas":0,"selector":{"app":"rc2"},"template":{"metadata":{"labels":{"app":"rc2","x":"y"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`},
		{name: "spec", method: post, path: nsPath + "replicationcontrollers", body: `{"metadata":{"name":"r1"},"spec":{"replicas":-1,"minReadySeconds":-1,"selector":{"app":"x"},"template":{"metadata":{"labels":{"app":"y"}},"spec":{"restartPolicy":"OnFailure","activeDeadlineSeconds":5,"containers":[{"name":"c","image":"i"}]}}}}`},
		{name: "no template", method: post, path: nsPath + "replicationcontrollers", body: `{"metadata":{"name":"r2"},"spec":{"replicas":1}}`},
		{name: "no selector", method: post, path: nsPath + "replicationcontrollers", body: `{"metadata":{"name":"r3"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}}`},
		{name: "template labels", method: post, path: nsPath + "replicationcontrollers", body: `{"metadata":{"name":"r4"},"spec":{"selector":{"a b":"c"},"template":{"metadata":{"labels":{"a b":"c"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`},
		{name: "scale", method: get, path: nsPath + "replicationcontrollers/rc2/scale"},
		{name: "scale negative", method: patch, path: nsPath + "replicationcontrollers/rc2/scale", body: `{"spec":{"replicas":-1}}`},
		{name: "status", method: patch, path: nsPath + "replicationcontrollers/rc2/status", body: `{"status":{"replicas":1,"readyReplicas":2,"availableReplicas":3,"fullyLabeledReplicas":-1}}`},
		{name: "table", method: get, path: nsPath + "replicationcontrollers/rc2", accept: "table"},
		{name: "delete orphans", method: del, path: nsPath + "replicationcontrollers/rc1", drop: []string{"status"}},
		{name: "delete background", method: del, path: nsPath + "replicationcontrollers/rc2?propagationPolicy=Background"},
	}},
	{"persistentvolumes", []step{
		{name: "nfs", method: post, path: "/api/v1/persistentvolumes", body: `{"metadata":{"name":"{ns}-pv1"},"spec":{"storageClassName":"slow","capacity":{"storage":"5Gi"},"accessModes":["ReadWriteMany"],"nfs":{"server":"nfs.example.com","path":"/exports"},"mountOptions":["hard"]}}`},
		{name: "local", method: post, path: "/api/v1/persistentvolumes", body: `{"metadata":{"name":"{ns}-pv2"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"local":{"path":"/mnt/disk"},"storageClassName":"local","nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["n1"]}]}]}}}}`},
		{name: "csi block", method: post, path: "/api/v1/persistentvolumes", body: `{"metadata":{"name":"{ns}-pv3"},"spec":{"storageClassName":"slow","capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"csi":{"driver":"ebs.csi.aws.com","volumeHandle":"vol-1"},"volumeMode":"Block"}}`},
		{name: "empty", method: post, path: "/api/v1/persistentvolumes", body: `{"metadata":{"name":"{ns}-bad1"},"spec":{}}`},
		{name: "capacity", method: post, path: "/api/v1/persistentvolumes", body: `{"metadata":{"name":"{ns}-bad2"},"spec":{"capacity":{"cpu":"1"},"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/x"}}}`},
		{name: "many sources", method: post, path: "/api/v1/persistentvolumes", body: `{"metadata":{"name":"{ns}-bad3"},"spec":{"capacity":{"storage":"0"},"accessModes":["ReadWriteOncePod","ReadOnlyMany"],"persistentVolumeReclaimPolicy":"Keep","hostPath":{"path":"/a/../b","type":"Weird"},"nfs":{"server":"s","path":"p"},"local":{"path":"/x"},"volumeMode":"Raw","storageClassName":"Bad_C"}}`},
		{name: "local without affinity", method: post, path: "/api/v1/persistentvolumes", body: `{"metadata":{"name":"{ns}-bad4"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"local":{"path":"/x"}}}`},
		{name: "csi", method: post, path: "/api/v1/persistentvolumes", body: `{"metadata":{"name":"{ns}-bad5"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"csi":{"driver":"","volumeHandle":"","nodePublishSecretRef":{"name":"","namespace":"Bad_NS"}},"volumeAttributesClassName":""}}`},
		{name: "node affinity", method: post, path: "/api/v1/persistentvolumes", body: `{"metadata":{"name":"{ns}-bad6"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/"},"persistentVolumeReclaimPolicy":"Recycle","nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"Foo"},{"key":"b","operator":"In"},{"key":"c","operator":"Exists","values":["x"]}],"matchFields":[{"key":"spec.x","operator":"In","values":["a","b"]}]}]}}}}`},
		{name: "mount options", method: post, path: "/api/v1/persistentvolumes", body: `{"metadata":{"name":"{ns}-bad7","annotations":{"volume.beta.kubernetes.io/mount-options":"ro"}},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/x"},"nodeAffinity":{}}}`},
		{name: "iscsi and fc", method: post, path: "/api/v1/persistentvolumes", body: `{"metadata":{"name":"{ns}-bad8"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"iscsi":{"targetPortal":"","iqn":"bad","lun":300,"chapAuthSession":true},"fc":{"targetWWNs":["a"]}}}`},
		{name: "flex", method: post, path: "/api/v1/persistentvolumes", body: `{"metadata":{"name":"{ns}-bad9"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"flexVolume":{"driver":"","options":{"kubernetes.io/x":"1"}},"nfs":{"server":"s","path":"/p"}}}`},
		{name: "azure disk", method: post, path: "/api/v1/persistentvolumes", body: `{"metadata":{"name":"{ns}-bad10"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"azureDisk":{"diskName":"d","diskURI":"x","kind":"Managed","cachingMode":"Bad"}}}`},
		{name: "source fixed", method: patch, path: "/api/v1/persistentvolumes/{ns}-pv1", body: `{"spec":{"nfs":{"path":"/other"},"volumeMode":"Block"}}`},
		{name: "affinity fixed", method: patch, path: "/api/v1/persistentvolumes/{ns}-pv2", body: `{"spec":{"nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["n2"]}]}]}}}}`},
		{name: "affinity to GA label", method: patch, path: "/api/v1/persistentvolumes/{ns}-pv3", body: `{"spec":{"nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"failure-domain.beta.kubernetes.io/zone","operator":"In","values":["z"]}]}]}}}}`, drop: []string{"status"}},
		{name: "affinity from beta to GA label", method: patch, path: "/api/v1/persistentvolumes/{ns}-pv3", body: `{"spec":{"nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"topology.kubernetes.io/zone","operator":"In","values":["z"]}]}]}}}}`, drop: []string{"status"}},
		{name: "status", method: patch, path: "/api/v1/persistentvolumes/{ns}-pv3/status", body: `{"status":{"phase":"Available","reason":"Checked","message":"m"}}`},
		{name: "table", method: get, path: "/api/v1/persistentvolumes/{ns}-pv3", accept: "table"},
		{name: "delete", method: del, path: "/api/v1/persistentvolumes/{ns}-pv1", check: checkCode},
	}},
	{"persistentvolumeclaims", []step{
		{name: "create", method: post, path: nsPath + "persistentvolumeclaims", body: `{"metadata":{"name":"pvc1"},"spec":{"storageClassName":"","accessModes":["ReadWriteOnce","ReadOnlyMany"],"resources":{"requests":{"storage":"1.5Gi"},"limits":{"storage":"2Gi"}},"dataSource":{"kind":"PersistentVolumeClaim","name":"src"}},"status":{"phase":"Bound"}}`},
		{name: "create without class", method: post, path: nsPath + "persistentvolumeclaims", body: `{"metadata":{"name":"pvc2","annotations":{"volume.beta.kubernetes.io/storage-class":"old"}},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`},
		{name: "empty", method: post, path: nsPath + "persistentvolumeclaims", body: `{"metadata":{"name":"c1"},"spec":{}}`},
		{name: "spec", method: post, path: nsPath + "persistentvolumeclaims", body: `{"metadata":{"name":"c2"},"spec":{"accessModes":["ReadWriteOncePod","ReadWriteOnce","Bogus"],"resources":{"requests":{"storage":"0"}},"storageClassName":"Bad_Class","volumeMode":"Raw"}}`},
		{name: "storage and selector", method: post, path: nsPath + "persistentvolumeclaims", body: `{"metadata":{"name":"c3"},"spec":{"storageClassName":"","accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"-1Gi"}},"selector":{"matchLabels":{"a b":"c"}}}}`},
		{name: "data sources", method: post, path: nsPath + "persistentvolumeclaims", body: `{"metadata":{"name":"c4"},"spec":{"storageClassName":"","accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"dataSourceRef":{"kind":"Foo","name":""},"dataSource":{"kind":"PersistentVolumeClaim","name":"x"}}}`},
		{name: "data source group", method: post, path: nsPath + "persistentvolumeclaims", body: `{"metadata":{"name":"c5"},"spec":{"storageClassName":"","accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"dataSourceRef":{"kind":"Snap","apiGroup":"Bad_Group","name":"s"},"volumeAttributesClassName":"Bad"}}`},
		{name: "old data source dropped", method: post, path: nsPath + "persistentvolumeclaims", body: `{"metadata":{"name":"c6"},"spec":{"storageClassName":"","accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"dataSource":{"kind":"Foo","name":"x"}}}`},
		{name: "spec fixed", method: patch, path: nsPath + "persistentvolumeclaims/pvc1", body: `{"spec":{"accessModes":["ReadWriteMany"]}}`},
		{name: "request", method: patch, path: nsPath + "persistentvolumeclaims/pvc1", body: `{"spec":{"resources":{"requests":{"storage":"1Gi"}}}}`},
		{name: "mode and class", method: patch, path: nsPath + "persistentvolumeclaims/pvc1", body: `{"spec":{"volumeMode":"Block","storageClassName":"x"}}`},
		{name: "class from annotation", method: patch, path: nsPath + "persistentvolumeclaims/pvc2", body: `{"spec":{"storageClassName":"old"}}`, drop: []string{"status"}},
		{name: "status", method: patch, path: nsPath + "persistentvolumeclaims/pvc1/status", body: `{"status":{"capacity":{"storage":"-1"},"allocatedResources":{"memory":"1Gi"}}}`},
		{name: "table", method: get, path: nsPath + "persistentvolumeclaims/pvc1", accept: "table"},
		{name: "delete", method: del, path: nsPath + "persistentvolumeclaims/c6", check: checkCode},
	}},
	{"componentstatuses", []step{
		{name: "list", method: get, path: "/api/v1/componentstatuses", check: checkWarning},
		{name: "get", method: get, path: "/api/v1/componentstatuses/etcd-0"},
		{name: "not found", method: get, path: "/api/v1/componentstatuses/nope"},
		{name: "watch", method: get, path: "/api/v1/componentstatuses?watch=1"},
		{name: "delete", method: del, path: "/api/v1/componentstatuses/etcd-0"},
		{name: "create", method: post, path: "/api/v1/componentstatuses", body: `{"metadata":{"name":"x"}}`},
		{name: "label selector", method: get, path: "/api/v1/componentstatuses?labelSelector=a%3D%3D%3Db"},
		{name: "unknown field", method: get, path: "/api/v1/componentstatuses?fieldSelector=bogus%3Dx"},
		{name: "by name", method: get, path: "/api/v1/componentstatuses?fieldSelector=metadata.name%3Detcd-0"},
		{name: "by label", method: get, path: "/api/v1/componentstatuses?labelSelector=a%3Db"},
		{name: "table", method: get, path: "/api/v1/componentstatuses/etcd-0", accept: "table"},
	}},
	{"deletes", []step{
		{name: "configmap", method: post, path: nsPath + "configmaps", body: `{"metadata":{"name":"cm1"}}`, check: checkCode},
		{name: "delete configmap", method: del, path: nsPath + "configmaps/cm1"},
		{name: "secret", method: post, path: nsPath + "secrets", body: `{"metadata":{"name":"s1"}}`, check: checkCode},
		{name: "delete secret", method: del, path: nsPath + "secrets/s1"},
		{name: "event", method: post, path: nsPath + "events", body: `{"metadata":{"name":"ev1"},"involvedObject":{"kind":"Pod","name":"x","namespace":"{ns}"},"reason":"R","message":"m"}`, check: checkCode},
		{name: "delete event", method: del, path: nsPath + "events/ev1"},
		{name: "service", method: post, path: nsPath + "services", body: `{"metadata":{"name":"svc1"},"spec":{"clusterIP":"None","selector":{"app":"x"},"ports":[{"port":80}]}}`, check: checkCode},
		{name: "delete service", method: del, path: nsPath + "services/svc1"},
		{name: "node", method: post, path: "/api/v1/nodes", body: `{"metadata":{"name":"{ns}-node"}}`, check: checkCode},
		{name: "delete node", method: del, path: "/api/v1/nodes/{ns}-node"},
		{name: "namespace", method: post, path: "/api/v1/namespaces", body: `{"metadata":{"name":"{ns}-x"}}`, check: checkCode},
		{name: "delete namespace", method: del, path: "/api/v1/namespaces/{ns}-x"},
		{name: "namespace phase", method: patch, path: "/api/v1/namespaces/{ns}/status", body: `{"status":{"phase":"Terminating"}}`},
	}},
	{"fieldselectors", fieldSelectorSteps()},
}

// fieldSelectorSteps lists, for each core kind, the field labels
// kube-apiserver accepts (compared by code: the lists differ) and one it
// refuses (compared whole: the message depends on the kind).
func fieldSelectorSteps() []step {
	accepted := map[string][]string{
		"pods": {"metadata.name", "metadata.namespace", "spec.nodeName", "spec.host", "spec.restartPolicy", "spec.schedulerName",
			"spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName"},
		"services":   {"metadata.name", "metadata.namespace", "spec.clusterIP", "spec.type"},
		"configmaps": {"metadata.name", "metadata.namespace"},
		"secrets":    {"metadata.name", "metadata.namespace", "type"},
		"events": {"metadata.name", "metadata.namespace", "involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
			"involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
			"reason", "reportingComponent", "source", "type"},
		"serviceaccounts":        {"metadata.name", "metadata.namespace"},
		"endpoints":              {"metadata.name", "metadata.namespace"},
		"limitranges":            {"metadata.name", "metadata.namespace"},
		"resourcequotas":         {"metadata.name", "metadata.namespace"},
		"persistentvolumeclaims": {"metadata.name", "metadata.namespace"},
		"podtemplates":           {"metadata.name", "metadata.namespace"},
		"replicationcontrollers": {"metadata.name", "metadata.namespace", "status.replicas"},
		"nodes":                  {"metadata.name", "spec.unschedulable"},
		"namespaces":             {"metadata.name", "status.phase"},
		"persistentvolumes":      {"metadata.name", "metadata.namespace"},
	}
	clusterScoped := map[string]bool{"nodes": true, "namespaces": true, "persistentvolumes": true}
	var steps []step
	for _, kind := range []string{"pods", "services", "configmaps", "secrets", "events", "serviceaccounts", "endpoints",
		"limitranges", "resourcequotas", "persistentvolumeclaims", "podtemplates", "replicationcontrollers",
		"nodes", "namespaces", "persistentvolumes"} {
		base := nsPath + kind
		if clusterScoped[kind] {
			base = "/api/v1/" + kind
		}
		for _, label := range accepted[kind] {
			steps = append(steps, step{name: kind + " " + label, method: get, path: base + "?fieldSelector=" + label + "%3Dx", check: checkCode})
		}
		for _, label := range []string{"name", "bogus", "metadata.namespace", "spec.nodeName"} {
			if !slices.Contains(accepted[kind], label) {
				steps = append(steps, step{name: kind + " " + label + " refused", method: get, path: base + "?fieldSelector=" + label + "%3Dx"})
			}
		}
	}
	return steps
}
