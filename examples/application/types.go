package application

import (
	"embed"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The API of the custom resource, as config/crd.yaml declares it.
const (
	Group    = "apps.setpoint.dev"
	Version  = "v1"
	Kind     = "Application"
	Resource = "applications"
	// CRDName is the CustomResourceDefinition's name.
	CRDName = Resource + "." + Group
)

// GroupVersion is apps.setpoint.dev/v1.
var GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// GroupVersionResource is the resource Application objects are served as.
var GroupVersionResource = GroupVersion.WithResource(Resource)

// Phase summarises an Application's status; see the package comment for
// when each one holds.
type Phase string

// The phases, the enum of status.phase in the CRD.
const (
	PhasePending     Phase = "Pending"
	PhaseProgressing Phase = "Progressing"
	PhaseRunning     Phase = "Running"
	PhaseFailed      Phase = "Failed"
	PhaseTerminating Phase = "Terminating"
)

// Condition types of status.conditions.
const (
	// ConditionAvailable is True when at least spec.replicas pods are
	// ready.
	ConditionAvailable = "Available"
	// ConditionProgressing is True while the Deployment rolls out or
	// scales towards the spec, False once it got there (reason
	// RolloutComplete) or cannot (reason ProgressDeadlineExceeded or
	// NotOwned).
	ConditionProgressing = "Progressing"
)

// Application is seed 001's "应用管理器" resource: an image run as
// spec.replicas pods listening on spec.port, behind a Service.
type Application struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ApplicationSpec   `json:"spec,omitempty"`
	Status ApplicationStatus `json:"status,omitempty"`
}

// ApplicationSpec is what the user asks for. The server defaults Replicas
// to 1 and Port to 80 and rejects values out of range (422), so a
// Replicas or Port read back from the server is never nil.
type ApplicationSpec struct {
	// Image is the container image; required, non-empty.
	Image string `json:"image"`
	// Replicas is the number of pods, 0..100.
	Replicas *int32 `json:"replicas,omitempty"`
	// Port is the container port and the Service port, 1..65535.
	Port *int32 `json:"port,omitempty"`
}

// ApplicationStatus is what the operator observed; it is written only
// through the status subresource.
type ApplicationStatus struct {
	Phase Phase `json:"phase,omitempty"`
	// ReadyReplicas is the Deployment's status.readyReplicas.
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// ObservedGeneration is the metadata.generation the rest of the
	// status describes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are Available and Progressing, one of each at most.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ApplicationList is a list of Applications.
type ApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Application `json:"items"`
}

// AddToScheme registers Application and ApplicationList (and the meta/v1
// option kinds) under apps.setpoint.dev/v1, so that a manager whose
// Options.Scheme holds them maps *Application to its resource, names it
// in owner references and events, and encodes it with its kind.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Application{}, &ApplicationList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

//go:embed config/crd.yaml
var manifests embed.FS

// CRDManifest returns config/crd.yaml, the CustomResourceDefinition
// of Application (YAML).
func CRDManifest() []byte {
	b, err := manifests.ReadFile("config/crd.yaml")
	if err != nil {
		panic(fmt.Sprintf("application: embedded crd.yaml: %v", err)) // the embed directive guarantees it
	}
	return b
}

// ReplicasOrDefault returns spec.replicas, 1 (the CRD's default) when unset.
func (s *ApplicationSpec) ReplicasOrDefault() int32 {
	if s.Replicas == nil {
		return 1
	}
	return *s.Replicas
}

// PortOrDefault returns spec.port, 80 (the CRD's default) when unset.
func (s *ApplicationSpec) PortOrDefault() int32 {
	if s.Port == nil {
		return 80
	}
	return *s.Port
}

// DeepCopyInto copies a into out.
func (a *Application) DeepCopyInto(out *Application) {
	*out = *a
	a.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	a.Spec.DeepCopyInto(&out.Spec)
	a.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a copy of a that shares no memory with it.
func (a *Application) DeepCopy() *Application {
	if a == nil {
		return nil
	}
	out := new(Application)
	a.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (a *Application) DeepCopyObject() runtime.Object {
	if c := a.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies s into out.
func (s *ApplicationSpec) DeepCopyInto(out *ApplicationSpec) {
	*out = *s
	if s.Replicas != nil {
		out.Replicas = new(int32)
		*out.Replicas = *s.Replicas
	}
	if s.Port != nil {
		out.Port = new(int32)
		*out.Port = *s.Port
	}
}

// DeepCopyInto copies s into out.
func (s *ApplicationStatus) DeepCopyInto(out *ApplicationStatus) {
	*out = *s
	if s.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(s.Conditions))
		for i := range s.Conditions {
			s.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
}

// DeepCopyInto copies l into out.
func (l *ApplicationList) DeepCopyInto(out *ApplicationList) {
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Application, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a copy of l that shares no memory with it.
func (l *ApplicationList) DeepCopy() *ApplicationList {
	if l == nil {
		return nil
	}
	out := new(ApplicationList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *ApplicationList) DeepCopyObject() runtime.Object {
	if c := l.DeepCopy(); c != nil {
		return c
	}
	return nil
}
