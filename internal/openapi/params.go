package openapi

import (
	"slices"
	"strings"
)

// param is one path or query parameter.
type param struct {
	name string
	in   string // "path" or "query"
	typ  string // "string", "integer" or "boolean"
	desc string
	// required is true for path parameters.
	required bool
}

func query(name, typ, desc string) param {
	return param{name: name, in: "query", typ: typ, desc: desc}
}

func nameParam(kind string) param {
	return param{name: "name", in: "path", typ: "string", required: true, desc: "name of the " + kind}
}

var (
	namespaceParam = param{name: "namespace", in: "path", typ: "string", required: true,
		desc: "object name and auth scope, such as for teams and projects"}
	prettyParam = query("pretty", "string",
		"If 'true', the output is indented for reading.")

	allowWatchBookmarks = query("allowWatchBookmarks", "boolean",
		"Ask for BOOKMARK watch events, which carry only a resourceVersion to resume from. Ignored by non-watch requests.")
	continueParam = query("continue", "string",
		"The opaque token of a previous paginated list response (metadata.continue), to fetch the next page.")
	fieldSelector = query("fieldSelector", "string",
		"Restrict the returned objects by their fields, e.g. metadata.name=web. Defaults to everything.")
	labelSelector = query("labelSelector", "string",
		"Restrict the returned objects by their labels, e.g. app=web,tier!=db. Defaults to everything.")
	limit = query("limit", "integer",
		"The maximum number of objects of a list response; when more exist, metadata.continue is set to fetch the rest.")
	resourceVersion = query("resourceVersion", "string",
		"Which version of the data a read may return; see the resourceVersion semantics of the Kubernetes API. Defaults to the latest (a consistent read).")
	resourceVersionMatch = query("resourceVersionMatch", "string",
		"How resourceVersion applies to a list: NotOlderThan or Exact. Only valid when resourceVersion is set.")
	shardSelector = query("shardSelector", "string",
		"Restrict a list or watch to a shard of the objects. Served for compatibility and ignored, as kube-apiserver ignores it while its ShardedListAndWatch feature is off.")
	sendInitialEvents = query("sendInitialEvents", "boolean",
		"With watch=true, start the watch with synthetic ADDED events for the current objects, followed by a bookmark marking the end of that state.")
	timeoutSeconds = query("timeoutSeconds", "integer",
		"Limit the duration of a list or watch call, in seconds.")
	watch = query("watch", "boolean",
		"Watch for changes to the described objects and return them as a stream of add, update and remove events.")

	dryRun = query("dryRun", "string",
		"When set to All, the request is processed fully but nothing is persisted. The only valid value is All.")
	fieldManager = query("fieldManager", "string",
		"The name of the actor making these changes, recorded in managedFields. Required for apply patches; at most 128 printable characters.")
	fieldValidation = query("fieldValidation", "string",
		"How to treat fields of the body the schema does not know and fields given twice: Ignore drops them silently, "+
			"Warn (the default) drops them with a warning header per field, Strict fails the request with an error naming them.")
	force = query("force", "boolean",
		"Apply patches only: take over fields owned by other managers instead of failing with a conflict. Must be unset for other patch types.")

	gracePeriodSeconds = query("gracePeriodSeconds", "integer",
		"Seconds to wait before the object is deleted; zero deletes at once. Defaults to the kind's own grace period.")
	orphanDependents = query("orphanDependents", "boolean",
		"Deprecated: use propagationPolicy. When true, dependents are orphaned instead of garbage collected.")
	propagationPolicy = query("propagationPolicy", "string",
		"Whether and how dependents are garbage collected: Orphan, Background or Foreground.")
	ignoreStoreReadError = query("ignoreStoreReadErrorWithClusterBreakingPotential", "boolean",
		"Delete an object whose stored data cannot be read or decoded. Skips finalizers and admission; use with care.")
)

// Query parameter sets of each operation kind.
var (
	listParams = []param{
		allowWatchBookmarks, continueParam, fieldSelector, labelSelector, limit,
		resourceVersion, resourceVersionMatch, sendInitialEvents, shardSelector, timeoutSeconds, watch,
	}
	writeParams  = []param{dryRun, fieldManager, fieldValidation}
	patchParams  = []param{dryRun, fieldManager, fieldValidation, force}
	deleteParams = []param{
		dryRun, gracePeriodSeconds, ignoreStoreReadError, orphanDependents, propagationPolicy,
	}
	deleteCollectionParams = []param{
		continueParam, dryRun, fieldSelector, gracePeriodSeconds, ignoreStoreReadError, labelSelector,
		limit, orphanDependents, propagationPolicy, resourceVersion, resourceVersionMatch,
		sendInitialEvents, shardSelector, timeoutSeconds,
	}
)

// hoist splits a route's parameters as Kubernetes publishes them: the
// route's own parameters, then every query parameter all of its operations
// share, at the path level; each operation keeps the rest.
func hoist(rt route) (pathParams []param, opParams [][]param) {
	pathParams = append(pathParams, rt.params...)
	opParams = make([][]param, len(rt.ops))
	if len(rt.ops) == 0 {
		return pathParams, opParams
	}
	shared := map[param]bool{}
	for _, p := range rt.ops[0].query {
		shared[p] = true
	}
	for _, op := range rt.ops[1:] {
		in := map[param]bool{}
		for _, p := range op.query {
			in[p] = true
		}
		for p := range shared {
			if !in[p] {
				delete(shared, p)
			}
		}
	}
	for _, p := range rt.ops[0].query {
		if shared[p] {
			pathParams = append(pathParams, p)
		}
	}
	for i, op := range rt.ops {
		for _, p := range op.query {
			if !shared[p] {
				opParams[i] = append(opParams[i], p)
			}
		}
		sortParams(opParams[i])
	}
	sortParams(pathParams)
	return pathParams, opParams
}

// sortParams orders parameters by name, path and query ones mixed, as
// kube-apiserver lists them.
func sortParams(ps []param) {
	slices.SortStableFunc(ps, func(a, b param) int { return strings.Compare(a.name, b.name) })
}
