package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/selection"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
)

// Node identities, as kube-apiserver recognizes them.
const (
	userPrefix = "system:node:"
	nodesGroup = "system:nodes"
	// leaseNamespace holds the nodes' Leases.
	leaseNamespace = "kube-node-lease"
)

// Authorizer is kube-apiserver's Node authorizer (--authorization-mode
// Node): it decides the requests of kubelets, users system:node:<name> in
// group system:nodes, and has no opinion on anyone else's.
type Authorizer struct {
	graph *Graph
}

var _ authorizer.Authorizer = (*Authorizer)(nil)

// New returns the Node authorizer reading graph.
func New(graph *Graph) *Authorizer { return &Authorizer{graph: graph} }

// NodeName returns the node a user is the kubelet of, whether the user is a
// node at all (in system:nodes with the system:node: prefix), and "" when
// the name after the prefix is empty.
func NodeName(u authorizer.User) (string, bool) {
	if !strings.HasPrefix(u.Name, userPrefix) || !slices.Contains(u.Groups, nodesGroup) {
		return "", false
	}
	return strings.TrimPrefix(u.Name, userPrefix), true
}

// RulesFor: a node's permissions cannot be listed (they follow the
// graph), so for nodes the answer is incomplete with an error, as
// kube-apiserver's; for others there is nothing.
func (a *Authorizer) RulesFor(_ context.Context, u authorizer.User, _ string) ([]authorizer.ResourceRule, []authorizer.NonResourceRule, bool, error) {
	if _, ok := NodeName(u); ok {
		return nil, nil, true, errors.New("node authorizer does not support user rule resolution")
	}
	return nil, nil, false, nil
}

// Authorize decides a node's request; see the package documentation.
func (a *Authorizer) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	node, ok := NodeName(attrs.User)
	if !ok {
		return authorizer.DecisionNoOpinion, "", nil
	}
	if node == "" {
		return authorizer.DecisionNoOpinion, fmt.Sprintf("unknown node for user %q", attrs.User.Name), nil
	}
	if attrs.ResourceRequest {
		if d, reason, handled := a.subdivided(node, attrs); handled {
			return d, reason, nil
		}
	}
	if rulesAllow(attrs, nodeRules) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// subdivided decides the resources whose access follows the graph or the
// node's name; handled is false for the others.
func (a *Authorizer) subdivided(node string, attrs authorizer.Attributes) (authorizer.Decision, string, bool) {
	var d authorizer.Decision
	var reason string
	switch attrs.APIGroup + "/" + attrs.Resource {
	case "/secrets":
		d, reason = a.readNamespaced(node, kindSecret, attrs)
	case "/configmaps":
		d, reason = a.readNamespaced(node, kindConfigMap, attrs)
	case "/persistentvolumeclaims":
		if attrs.Subresource == "status" {
			d, reason = a.statusUpdate(node, attrs)
		} else {
			d, reason = a.get(node, attrs, a.relatedFunc(kindPVC))
		}
	case "/persistentvolumes":
		d, reason = a.get(node, attrs, func(n string, at authorizer.Attributes) bool { return a.graph.PVRelated(n, at.Name) })
	case "resource.k8s.io/resourceclaims":
		d, reason = a.get(node, attrs, a.relatedFunc(kindResourceClaim))
	case "storage.k8s.io/volumeattachments":
		d, reason = a.get(node, attrs, func(n string, at authorizer.Attributes) bool { return a.graph.AttachmentOnNode(n, at.Name) })
	case "/serviceaccounts":
		d, reason = a.serviceAccount(node, attrs)
	case "coordination.k8s.io/leases":
		d, reason = a.ownNamed(node, attrs, "a node lease", "", true)
	case "storage.k8s.io/csinodes":
		d, reason = a.ownNamed(node, attrs, "a CSINode", "CSINode", false)
	case "resource.k8s.io/resourceslices":
		d, reason = a.resourceSlice(node, attrs)
	case "/nodes":
		d, reason = nodeObject(node, attrs)
	case "/pods":
		d, reason = a.pod(node, attrs)
	case "certificates.k8s.io/podcertificaterequests":
		d, reason = a.podCertificateRequest(node, attrs)
	default:
		return 0, "", false
	}
	return d, reason, true
}

func noRelationship(node string) string {
	return fmt.Sprintf("no relationship found between node '%s' and this object", node)
}

func (a *Authorizer) relatedFunc(k kind) func(string, authorizer.Attributes) bool {
	return func(node string, at authorizer.Attributes) bool {
		return a.graph.related(node, k, at.Namespace, at.Name)
	}
}

// byGraph allows a named object the graph relates to node.
func byGraph(node string, attrs authorizer.Attributes, related func(string, authorizer.Attributes) bool) (authorizer.Decision, string) {
	if attrs.Name == "" {
		return authorizer.DecisionNoOpinion, "No Object name found"
	}
	if !related(node, attrs) {
		return authorizer.DecisionNoOpinion, noRelationship(node)
	}
	return authorizer.DecisionAllow, ""
}

// get allows get of a related object, no subresource.
func (a *Authorizer) get(node string, attrs authorizer.Attributes, related func(string, authorizer.Attributes) bool) (authorizer.Decision, string) {
	if attrs.Verb != "get" {
		return authorizer.DecisionNoOpinion, "can only get individual resources of this type"
	}
	if attrs.Subresource != "" {
		return authorizer.DecisionNoOpinion, "cannot get subresource"
	}
	return byGraph(node, attrs, related)
}

// readNamespaced allows get, list and watch of a related object by name.
func (a *Authorizer) readNamespaced(node string, k kind, attrs authorizer.Attributes) (authorizer.Decision, string) {
	switch attrs.Verb {
	case "get", "list", "watch":
	default:
		return authorizer.DecisionNoOpinion, "can only read resources of this type"
	}
	if attrs.Subresource != "" {
		return authorizer.DecisionNoOpinion, "cannot read subresource"
	}
	if attrs.Namespace == "" {
		return authorizer.DecisionNoOpinion, "can only read namespaced object of this type"
	}
	return byGraph(node, attrs, a.relatedFunc(k))
}

// statusUpdate allows update and patch of a related claim's status.
func (a *Authorizer) statusUpdate(node string, attrs authorizer.Attributes) (authorizer.Decision, string) {
	switch attrs.Verb {
	case "update", "patch":
	default:
		return authorizer.DecisionNoOpinion, "can only get/update/patch this type"
	}
	return byGraph(node, attrs, a.relatedFunc(kindPVC))
}

// serviceAccount allows get of, and token requests for, the
// ServiceAccounts of the node's pods.
func (a *Authorizer) serviceAccount(node string, attrs authorizer.Attributes) (authorizer.Decision, string) {
	if attrs.Verb == "get" && attrs.Subresource == "" {
		return a.readNamespaced(node, kindServiceAccount, attrs)
	}
	if attrs.Verb != "create" || attrs.Name == "" {
		return authorizer.DecisionNoOpinion, "can only create tokens for individual service accounts"
	}
	if attrs.Subresource != "token" {
		return authorizer.DecisionNoOpinion, "can only create token subresource of serviceaccount"
	}
	if !a.graph.related(node, kindServiceAccount, attrs.Namespace, attrs.Name) {
		return authorizer.DecisionNoOpinion, noRelationship(node)
	}
	return authorizer.DecisionAllow, ""
}

// ownNamed allows get, create, update, patch and delete of the object
// named after the node (its Lease in kube-node-lease, its CSINode); create
// is left to NodeRestriction, which sees the name.
func (a *Authorizer) ownNamed(node string, attrs authorizer.Attributes, what, kindName string, lease bool) (authorizer.Decision, string) {
	switch attrs.Verb {
	case "get", "create", "update", "patch", "delete":
	default:
		return authorizer.DecisionNoOpinion, "can only get, create, update, patch, or delete " + what
	}
	if lease {
		if attrs.Namespace != leaseNamespace {
			return authorizer.DecisionNoOpinion, fmt.Sprintf("can only access leases in the %q system namespace", leaseNamespace)
		}
	} else if attrs.Subresource != "" {
		return authorizer.DecisionNoOpinion, "cannot authorize CSINode subresources"
	}
	if attrs.Verb != "create" && attrs.Name != node {
		if lease {
			return authorizer.DecisionNoOpinion, "can only access node lease with the same name as the requesting node"
		}
		return authorizer.DecisionNoOpinion, "can only access " + kindName + " with the same name as the requesting node"
	}
	return authorizer.DecisionAllow, ""
}

// selects reports whether the request's field selector is field=value.
func selects(attrs authorizer.Attributes, field, value string) bool {
	for _, r := range attrs.FieldSelector {
		if r.Field == field && (r.Operator == selection.Equals || r.Operator == selection.DoubleEquals) && r.Value == value {
			return true
		}
	}
	return false
}

func (a *Authorizer) resourceSlice(node string, attrs authorizer.Attributes) (authorizer.Decision, string) {
	if attrs.Subresource != "" {
		return authorizer.DecisionNoOpinion, "cannot authorize ResourceSlice subresources"
	}
	switch attrs.Verb {
	case "create":
		return authorizer.DecisionAllow, ""
	case "get", "update", "patch", "delete":
		return byGraph(node, attrs, func(n string, at authorizer.Attributes) bool {
			return a.graph.nodeObjectOn(n, "resourceslices", "", at.Name)
		})
	case "watch", "list", "deletecollection":
		if selects(attrs, "spec.nodeName", node) {
			return authorizer.DecisionAllow, ""
		}
		return authorizer.DecisionNoOpinion, "can only list/watch/deletecollection resourceslices with nodeName field selector"
	}
	return authorizer.DecisionNoOpinion, "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection"
}

func (a *Authorizer) podCertificateRequest(node string, attrs authorizer.Attributes) (authorizer.Decision, string) {
	if attrs.Subresource != "" {
		return authorizer.DecisionNoOpinion, "nodes may not access the status subresource of PodCertificateRequests"
	}
	switch attrs.Verb {
	case "create":
		return authorizer.DecisionAllow, ""
	case "get":
		return byGraph(node, attrs, func(n string, at authorizer.Attributes) bool {
			return a.graph.nodeObjectOn(n, "podcertificaterequests", at.Namespace, at.Name)
		})
	case "list", "watch":
		if selects(attrs, "spec.nodeName", node) {
			return authorizer.DecisionAllow, ""
		}
		return authorizer.DecisionNoOpinion, "can only list/watch podcertificaterequests with nodeName field selector"
	}
	return authorizer.DecisionNoOpinion, fmt.Sprintf("nodes may not %s podcertificaterequests", attrs.Verb)
}

// nodeObject: a node may create and update Nodes (NodeRestriction keeps
// it to its own) and read only its own.
func nodeObject(node string, attrs authorizer.Attributes) (authorizer.Decision, string) {
	switch attrs.Subresource {
	case "":
		switch attrs.Verb {
		case "create", "update", "patch":
			return authorizer.DecisionAllow, ""
		case "get", "list", "watch":
			switch attrs.Name {
			case node:
				return authorizer.DecisionAllow, ""
			case "":
				return authorizer.DecisionNoOpinion, fmt.Sprintf("node '%s' cannot read all nodes, only its own Node object", node)
			default:
				return authorizer.DecisionNoOpinion, fmt.Sprintf("node '%s' cannot read '%s', only its own Node object", node, attrs.Name)
			}
		}
	case "status":
		if attrs.Verb == "update" || attrs.Verb == "patch" {
			return authorizer.DecisionAllow, ""
		}
	}
	return authorizer.DecisionNoOpinion, ""
}

// pod: a node reads the pods bound to it (get by the graph, list and
// watch with spec.nodeName=<node>), creates and deletes (mirror) pods,
// writes pod status and evicts; NodeRestriction keeps the writes to its
// own pods.
func (a *Authorizer) pod(node string, attrs authorizer.Attributes) (authorizer.Decision, string) {
	onNode := func(n string, at authorizer.Attributes) bool { return a.graph.PodOnNode(n, at.Namespace, at.Name) }
	switch attrs.Subresource {
	case "":
		switch attrs.Verb {
		case "get":
			return a.get(node, attrs, onNode)
		case "list", "watch":
			if selects(attrs, "spec.nodeName", node) {
				return authorizer.DecisionAllow, ""
			}
			if attrs.Name != "" {
				return byGraph(node, attrs, onNode)
			}
			return authorizer.DecisionNoOpinion, "can only list/watch pods with spec.nodeName field selector"
		case "create", "delete":
			return authorizer.DecisionAllow, ""
		}
	case "status":
		if attrs.Verb == "update" || attrs.Verb == "patch" {
			return authorizer.DecisionAllow, ""
		}
	case "eviction":
		if attrs.Verb == "create" {
			return authorizer.DecisionAllow, ""
		}
	}
	return authorizer.DecisionNoOpinion, ""
}
