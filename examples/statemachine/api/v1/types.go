package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of Database.
var GroupVersion = schema.GroupVersion{Group: "demo.setpoint.dev", Version: "v1"}

// Resource is the plural resource name under which Database is served.
const Resource = "databases"

// GroupVersionResource names the served resource.
func GroupVersionResource() schema.GroupVersionResource { return GroupVersion.WithResource(Resource) }

// AddToScheme registers Database and DatabaseList in s.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Database{}, &DatabaseList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Engine is the database engine asked for.
type Engine string

// The engines the CRD's enum accepts.
const (
	EnginePostgres Engine = "postgres"
	EngineMySQL    Engine = "mysql"
)

// Phase is a step of the Database's life (seed 004 §6.3):
//
//	"" → Pending → Provisioning → Running ⇄ Updating
//	Provisioning, Updating → Failed → Pending (retry)
//	any phase → Terminating (deletion) → gone
type Phase string

// The phases; the CRD's enum on status.phase accepts exactly these.
const (
	PhasePending      Phase = "Pending"
	PhaseProvisioning Phase = "Provisioning"
	PhaseRunning      Phase = "Running"
	PhaseUpdating     Phase = "Updating"
	PhaseFailed       Phase = "Failed"
	PhaseTerminating  Phase = "Terminating"
)

// ConditionReady is the condition type the controller keeps: True exactly
// while the phase is Running, with the phase as its reason otherwise.
const ConditionReady = "Ready"

// Database asks for a (simulated) database server.
type Database struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   DatabaseSpec   `json:"spec,omitempty"`
	Status DatabaseStatus `json:"status,omitempty"`
}

// DatabaseSpec is what the user wants. The CRD validates it: Engine is
// required and one of postgres/mysql, StorageGB is 1..1000 and defaults
// to 10.
type DatabaseSpec struct {
	Engine    Engine `json:"engine"`
	Version   string `json:"version,omitempty"`
	StorageGB int64  `json:"storageGB,omitempty"`
	// FailProvisioning makes every simulated provisioning or update of
	// this Database fail, for tests and demos; setting it back to false
	// lets the next retry succeed.
	FailProvisioning bool `json:"failProvisioning,omitempty"`
}

// DatabaseStatus is what the controller observed and did.
type DatabaseStatus struct {
	// Phase is the current step; "" until the controller first sees the
	// object.
	Phase Phase `json:"phase,omitempty"`
	// ObservedGeneration is the generation of the spec the last started
	// operation (provisioning or update) worked on. Running with
	// ObservedGeneration == metadata.generation means the current spec is
	// in place.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Message says what is happening, or why the last operation failed.
	Message string `json:"message,omitempty"`
	// Retries counts the failed attempts at the current spec; reset to 0
	// when the Database reaches Running and when the spec changes.
	Retries int32 `json:"retries,omitempty"`
	// PhaseTransitionTime is when Phase last changed, on the controller's
	// clock. The simulated operations (provisioning, update, teardown) and
	// the retry backoff are timed from it, so a restarted controller
	// resumes waiting where the previous one stopped.
	PhaseTransitionTime *metav1.MicroTime `json:"phaseTransitionTime,omitempty"`
	// Conditions holds Ready (see ConditionReady).
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// DatabaseList is a list of Databases.
type DatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Database `json:"items"`
}
