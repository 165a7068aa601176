package application

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The names and labels the operator writes.
const (
	// Finalizer is kept on every Application until its record is deleted.
	Finalizer = Group + "/cleanup"
	// RecordNamespace holds one record ConfigMap per Application; the
	// operator creates it when missing.
	RecordNamespace = "setpoint-records"
	// AppLabel labels the pods (and selects them) with the Application's
	// name.
	AppLabel = "app"
	// ManagedByLabel, valued ManagedBy, marks every object the operator
	// writes; an uncontrolled Deployment or Service carrying it is adopted.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "application-operator"
	// ContainerName is the name of the one container of the pods.
	ContainerName = "app"
	// PortName names the container port and the Service port.
	PortName = "http"
)

// RecordName is the name of the record ConfigMap of Application
// namespace/name in RecordNamespace.
func RecordName(namespace, name string) string {
	return "application-" + namespace + "-" + name
}

// CheckNames reports why app cannot be served under its name: the Service
// needs a DNS-1035 label (no dots, at most 63 characters) and the record
// ConfigMap a DNS subdomain. Only renaming (recreating) the Application
// helps.
func CheckNames(app *Application) error {
	if errs := validation.IsDNS1035Label(app.Name); len(errs) > 0 {
		return fmt.Errorf("name %q cannot name a Service: %s", app.Name, strings.Join(errs, "; "))
	}
	rec := RecordName(app.Namespace, app.Name)
	if errs := validation.IsDNS1123Subdomain(rec); len(errs) > 0 {
		return fmt.Errorf("record name %q is invalid: %s", rec, strings.Join(errs, "; "))
	}
	return nil
}

// podLabels are the labels of the pods and the selector of the
// Deployment and Service.
func podLabels(app *Application) map[string]string { return map[string]string{AppLabel: app.Name} }

// setManaged adds the managed-by label to labels (allocating the map) and
// returns it; other labels are kept.
func setManaged(labels map[string]string) map[string]string {
	if labels == nil {
		labels = map[string]string{}
	}
	labels[ManagedByLabel] = ManagedBy
	return labels
}

// MutateDeployment sets on d (new, or a copy of the live object) the
// fields the Application owns: the managed-by label, spec.replicas, the
// selector (only when unset: it is immutable), the pod label app=<name>,
// and one container named "app" with the image and a TCP containerPort
// "http". Fields it does not own, including the server's defaults on the
// existing container, are kept, so mutating an up-to-date Deployment
// changes nothing.
func MutateDeployment(d *appsv1.Deployment, app *Application) {
	d.Labels = setManaged(d.Labels)
	replicas := app.Spec.ReplicasOrDefault()
	d.Spec.Replicas = &replicas
	if d.Spec.Selector == nil {
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: podLabels(app)}
	}
	if d.Spec.Template.Labels == nil {
		d.Spec.Template.Labels = map[string]string{}
	}
	d.Spec.Template.Labels[AppLabel] = app.Name
	c := corev1.Container{Name: ContainerName}
	for _, existing := range d.Spec.Template.Spec.Containers {
		if existing.Name == ContainerName {
			c = *existing.DeepCopy()
		}
	}
	c.Image = app.Spec.Image
	port := corev1.ContainerPort{Name: PortName, ContainerPort: app.Spec.PortOrDefault(), Protocol: corev1.ProtocolTCP}
	if len(c.Ports) == 1 && c.Ports[0].HostPort == 0 && c.Ports[0].HostIP == "" {
		c.Ports[0].Name, c.Ports[0].ContainerPort, c.Ports[0].Protocol = port.Name, port.ContainerPort, port.Protocol
	} else {
		c.Ports = []corev1.ContainerPort{port}
	}
	d.Spec.Template.Spec.Containers = []corev1.Container{c}
}

// MutateService sets on s the fields the Application owns: the managed-by
// label, type ClusterIP, the selector app=<name> and one TCP port "http"
// from spec.port to the container port. The clusterIP and other server
// defaults are kept.
func MutateService(s *corev1.Service, app *Application) {
	s.Labels = setManaged(s.Labels)
	s.Spec.Type = corev1.ServiceTypeClusterIP
	s.Spec.Selector = podLabels(app)
	p := app.Spec.PortOrDefault()
	s.Spec.Ports = []corev1.ServicePort{{Name: PortName, Protocol: corev1.ProtocolTCP, Port: p, TargetPort: intstr.FromInt32(p)}}
}

// MutateRecord sets the data of the record ConfigMap of app: which
// Application it stands for (namespace, name, uid).
func MutateRecord(cm *corev1.ConfigMap, app *Application) {
	cm.Labels = setManaged(cm.Labels)
	cm.Data = map[string]string{"namespace": app.Namespace, "name": app.Name, "uid": string(app.UID)}
}
