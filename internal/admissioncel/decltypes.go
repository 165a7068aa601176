package admissioncel

import apiservercel "k8s.io/apiserver/pkg/cel"

// RequestDeclType is the type of `request`: the fields of an admission request.
func RequestDeclType() *apiservercel.DeclType {
	gvk := object("kubernetes.GroupVersionKind", req("group", apiservercel.StringType), req("version", apiservercel.StringType), req("kind", apiservercel.StringType))
	gvr := object("kubernetes.GroupVersionResource", req("group", apiservercel.StringType), req("version", apiservercel.StringType), req("resource", apiservercel.StringType))
	strings := apiservercel.NewListType(apiservercel.StringType, -1)
	user := object("kubernetes.UserInfo", opt("username", apiservercel.StringType), opt("uid", apiservercel.StringType),
		opt("groups", strings), opt("extra", apiservercel.NewMapType(apiservercel.StringType, strings, -1)))
	return object("kubernetes.AdmissionRequest",
		req("kind", gvk), req("resource", gvr), opt("subResource", apiservercel.StringType),
		req("requestKind", gvk), req("requestResource", gvr), opt("requestSubResource", apiservercel.StringType),
		req("name", apiservercel.StringType), opt("namespace", apiservercel.StringType), req("operation", apiservercel.StringType),
		req("userInfo", user), opt("dryRun", apiservercel.BoolType), opt("options", apiservercel.DynType))
}

// NamespaceDeclType is the type of `namespaceObject`.
func NamespaceDeclType() *apiservercel.DeclType {
	strings := apiservercel.NewListType(apiservercel.StringType, -1)
	labels := apiservercel.NewMapType(apiservercel.StringType, apiservercel.StringType, -1)
	condition := object("kubernetes.NamespaceCondition", req("status", apiservercel.StringType), req("type", apiservercel.StringType),
		req("lastTransitionTime", apiservercel.TimestampType), req("message", apiservercel.StringType), req("reason", apiservercel.StringType))
	meta := object("kubernetes.NamespaceMetadata", req("name", apiservercel.StringType), req("generateName", apiservercel.StringType),
		req("namespace", apiservercel.StringType), req("labels", labels), req("annotations", labels), req("UID", apiservercel.StringType),
		req("creationTimestamp", apiservercel.TimestampType), req("deletionGracePeriodSeconds", apiservercel.IntType),
		req("deletionTimestamp", apiservercel.TimestampType), req("generation", apiservercel.IntType),
		req("resourceVersion", apiservercel.StringType), req("finalizers", strings))
	return object("kubernetes.Namespace", req("metadata", meta),
		req("spec", object("kubernetes.NamespaceSpec", req("finalizers", strings))),
		req("status", object("kubernetes.NamespaceStatus", req("conditions", apiservercel.NewListType(condition, -1)), req("phase", apiservercel.StringType))))
}

func object(name string, fields ...*apiservercel.DeclField) *apiservercel.DeclType {
	m := make(map[string]*apiservercel.DeclField, len(fields))
	for _, f := range fields {
		m[f.Name] = f
	}
	return apiservercel.NewObjectType(name, m)
}

func req(name string, t *apiservercel.DeclType) *apiservercel.DeclField {
	return apiservercel.NewDeclField(name, t, true, nil, nil)
}

func opt(name string, t *apiservercel.DeclType) *apiservercel.DeclField {
	return apiservercel.NewDeclField(name, t, false, nil, nil)
}
