package audit

import (
	"encoding/json"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The audit.k8s.io/v1 wire format: the same JSON as kube-apiserver's
// k8s.io/apiserver/pkg/apis/audit/v1 types (field names, order, omitempty),
// defined here so that no package of k8s.io/apiserver enters the product.

// GroupVersion is the apiVersion of policies and events.
const GroupVersion = "audit.k8s.io/v1"

// HeaderAuditID is the request and response header carrying a request's
// audit ID.
const HeaderAuditID = "Audit-ID"

// Level says how much of a request is recorded.
type Level string

// The levels, from least to most.
const (
	// LevelNone records nothing.
	LevelNone Level = "None"
	// LevelMetadata records who did what to which object and the answer's
	// status, without bodies.
	LevelMetadata Level = "Metadata"
	// LevelRequest adds the request body.
	LevelRequest Level = "Request"
	// LevelRequestResponse adds the response body.
	LevelRequestResponse Level = "RequestResponse"
)

func (l Level) ord() int {
	switch l {
	case LevelMetadata:
		return 1
	case LevelRequest:
		return 2
	case LevelRequestResponse:
		return 3
	}
	return 0
}

// Less reports whether l records less than o.
func (l Level) Less(o Level) bool { return l.ord() < o.ord() }

// Stage is the point of a request's handling an event is written at.
type Stage string

// The stages.
const (
	// StageRequestReceived: as soon as the request is authenticated and
	// its level known, before it is handled.
	StageRequestReceived Stage = "RequestReceived"
	// StageResponseStarted: once the response headers are sent, before
	// the body; only long-running requests (watches, streams) have it.
	StageResponseStarted Stage = "ResponseStarted"
	// StageResponseComplete: once the response is complete.
	StageResponseComplete Stage = "ResponseComplete"
	// StagePanic: the handler panicked.
	StagePanic Stage = "Panic"
)

var allStages = []Stage{StageRequestReceived, StageResponseStarted, StageResponseComplete, StagePanic}

// Event is one audit event (kind Event, audit.k8s.io/v1).
type Event struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`

	Level        Level                   `json:"level"`
	AuditID      string                  `json:"auditID"`
	Stage        Stage                   `json:"stage"`
	RequestURI   string                  `json:"requestURI"`
	Verb         string                  `json:"verb"`
	User         authnv1.UserInfo        `json:"user"`
	Impersonated *authnv1.UserInfo       `json:"impersonatedUser,omitempty"`
	AuthnMeta    *AuthenticationMetadata `json:"authenticationMetadata,omitempty"`
	SourceIPs    []string                `json:"sourceIPs,omitempty"`
	UserAgent    string                  `json:"userAgent,omitempty"`
	ObjectRef    *ObjectReference        `json:"objectRef,omitempty"`
	// ResponseStatus is the answer's code, and for an answer that is a
	// Status its status, message, reason and details.
	ResponseStatus *metav1.Status `json:"responseStatus,omitempty"`
	// RequestObject is the request body as JSON (Request level and up).
	RequestObject json.RawMessage `json:"requestObject,omitempty"`
	// ResponseObject is the response body as JSON (RequestResponse).
	ResponseObject           json.RawMessage   `json:"responseObject,omitempty"`
	RequestReceivedTimestamp metav1.MicroTime  `json:"requestReceivedTimestamp"`
	StageTimestamp           metav1.MicroTime  `json:"stageTimestamp"`
	Annotations              map[string]string `json:"annotations,omitempty"`
}

// AuthenticationMetadata says how the request was authenticated.
type AuthenticationMetadata struct {
	ImpersonationConstraint string `json:"impersonationConstraint,omitempty"`
}

// ObjectReference names the object of a resource request.
type ObjectReference struct {
	Resource        string `json:"resource,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name,omitempty"`
	UID             string `json:"uid,omitempty"`
	APIGroup        string `json:"apiGroup,omitempty"`
	APIVersion      string `json:"apiVersion,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	Subresource     string `json:"subresource,omitempty"`
}

// Policy is an audit policy file (kind Policy, audit.k8s.io/v1).
type Policy struct {
	Kind       string            `json:"kind,omitempty"`
	APIVersion string            `json:"apiVersion,omitempty"`
	Metadata   metav1.ObjectMeta `json:"metadata,omitempty"`
	// Rules are evaluated in order; the first that matches sets the
	// level. No match: None.
	Rules []PolicyRule `json:"rules"`
	// OmitStages are never written, whatever the rule.
	OmitStages []Stage `json:"omitStages,omitempty"`
	// OmitManagedFields drops metadata.managedFields from recorded bodies
	// unless a rule says otherwise.
	OmitManagedFields bool `json:"omitManagedFields,omitempty"`
}

// PolicyRule maps requests to a level. Every field given must match; an
// empty field matches everything.
type PolicyRule struct {
	Level      Level    `json:"level"`
	Users      []string `json:"users,omitempty"`
	UserGroups []string `json:"userGroups,omitempty"`
	Verbs      []string `json:"verbs,omitempty"`
	// Resources match resource requests: group ("*" any), resources
	// ("*", "pods", "pods/log", "*/status", "pods/*") and names.
	Resources []GroupResources `json:"resources,omitempty"`
	// Namespaces match resource requests ("" for cluster-scoped).
	Namespaces []string `json:"namespaces,omitempty"`
	// NonResourceURLs match non-resource requests: exact paths, "*", or
	// prefixes ending in "*".
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
	// OmitStages are added to the policy's.
	OmitStages []Stage `json:"omitStages,omitempty"`
	// OmitManagedFields, when set, overrides the policy's.
	OmitManagedFields *bool `json:"omitManagedFields,omitempty"`
}

// GroupResources selects resources of one API group.
type GroupResources struct {
	Group         string   `json:"group,omitempty"`
	Resources     []string `json:"resources,omitempty"`
	ResourceNames []string `json:"resourceNames,omitempty"`
}
