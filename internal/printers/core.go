package printers

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/setpoint-dev/setpoint/internal/registry"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// coreTable returns the table of a core/v1 kind, nil for none.
func coreTable(kind string, now func() time.Time) registry.TableConvertor {
	switch kind {
	case "Pod":
		return podTable{newTable(podColumns, podCells, now)}
	case "Node":
		return newTable(nodeColumns, nodeCells, now)
	case "Namespace":
		return newTable(namespaceColumns, namespaceCells, now)
	case "Service":
		return newTable(serviceColumns, serviceCells, now)
	case "ConfigMap":
		return newTable(configMapColumns, configMapCells, now)
	case "Secret":
		return newTable(secretColumns, secretCells, now)
	case "Event":
		return newTable(eventColumns, eventCells, now)
	case "ServiceAccount":
		return newTable(serviceAccountColumns, serviceAccountCells, now)
	case "Endpoints":
		return newTable(endpointsColumns, endpointsCells, now)
	case "PodTemplate":
		return newTable(podTemplateColumns, podTemplateCells, now)
	case "ReplicationController":
		return newTable(replicationControllerColumns, replicationControllerCells, now)
	case "PersistentVolume":
		return newTable(persistentVolumeColumns, persistentVolumeCells, now)
	case "PersistentVolumeClaim":
		return newTable(persistentVolumeClaimColumns, persistentVolumeClaimCells, now)
	case "ResourceQuota":
		return newTable(resourceQuotaColumns, resourceQuotaCells, now)
	case "ComponentStatus":
		return newTable(componentStatusColumns, componentStatusCells, now)
	case "LimitRange":
		return createdAtTable[*corev1.LimitRange](now)
	case "Binding":
		return createdAtTable[*corev1.Binding](now)
	}
	return nil
}

var namespaceColumns = []metav1.TableColumnDefinition{
	nameColumn(0), column("Status", "string", "The status of the namespace."), ageColumn,
}

func namespaceCells(ns *corev1.Namespace, now time.Time) []interface{} {
	return []interface{}{ns.Name, string(ns.Status.Phase), age(ns.CreationTimestamp, now)}
}

var configMapColumns = []metav1.TableColumnDefinition{
	nameColumn(0), column("Data", "string", "Number of keys in data and binaryData."), ageColumn,
}

func configMapCells(cm *corev1.ConfigMap, now time.Time) []interface{} {
	return []interface{}{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), age(cm.CreationTimestamp, now)}
}

var secretColumns = []metav1.TableColumnDefinition{
	nameColumn(0), column("Type", "string", "The type of the secret."),
	column("Data", "string", "Number of keys in data."), ageColumn,
}

func secretCells(s *corev1.Secret, now time.Time) []interface{} {
	return []interface{}{s.Name, string(s.Type), int64(len(s.Data)), age(s.CreationTimestamp, now)}
}

var serviceColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Type", "string", "How the service is exposed."),
	column("Cluster-IP", "string", "The IP address of the service inside the cluster."),
	column("External-IP", "string", "Addresses the service is reachable at from outside."),
	column("Port(s)", "string", "The ports the service exposes."),
	ageColumn,
	wide("Selector", "string", "Labels of the pods the service routes to."),
}

func serviceCells(s *corev1.Service, now time.Time) []interface{} {
	clusterIP := "<none>"
	if len(s.Spec.ClusterIPs) > 0 {
		clusterIP = s.Spec.ClusterIPs[0]
	} else if s.Spec.ClusterIP != "" {
		clusterIP = s.Spec.ClusterIP
	}
	return []interface{}{
		s.Name, string(s.Spec.Type), clusterIP, serviceExternalIP(s), orNone(servicePorts(s.Spec.Ports)),
		age(s.CreationTimestamp, now), labels.FormatLabels(s.Spec.Selector),
	}
}

// serviceExternalIP renders EXTERNAL-IP as kubectl does for a wide table
// (the server renders every column wide).
func serviceExternalIP(s *corev1.Service) string {
	switch s.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(s.Spec.ExternalIPs) > 0 {
			return strings.Join(s.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		// The ingress addresses sorted and each once, then the external
		// IPs.
		seen := map[string]bool{}
		for _, ing := range s.Status.LoadBalancer.Ingress {
			switch {
			case ing.IP != "":
				seen[ing.IP] = true
			case ing.Hostname != "":
				seen[ing.Hostname] = true
			}
		}
		ips := make([]string, 0, len(seen))
		for ip := range seen {
			ips = append(ips, ip)
		}
		sort.Strings(ips)
		ips = append(ips, s.Spec.ExternalIPs...)
		if len(ips) == 0 {
			return "<pending>"
		}
		return strings.Join(ips, ",")
	case corev1.ServiceTypeExternalName:
		return s.Spec.ExternalName
	}
	return "<unknown>"
}

// servicePorts renders "80/TCP" or, with a node port, "80:30080/TCP".
func servicePorts(ports []corev1.ServicePort) string {
	parts := make([]string, len(ports))
	for i, p := range ports {
		if p.NodePort > 0 {
			parts[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		} else {
			parts[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		}
	}
	return strings.Join(parts, ",")
}

var nodeColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Status", "string", "The status of the node."),
	column("Roles", "string", "The roles of the node."),
	ageColumn,
	column("Version", "string", "Kubelet version reported by the node."),
	wide("Internal-IP", "string", "The node's internal IP address."),
	wide("External-IP", "string", "The node's external IP address."),
	wide("OS-Image", "string", "OS image reported by the node."),
	wide("Kernel-Version", "string", "Kernel version reported by the node."),
	wide("Container-Runtime", "string", "Container runtime version reported by the node."),
}

// Node role labels: node-role.kubernetes.io/<role> and kubernetes.io/role.
const (
	nodeRolePrefix = "node-role.kubernetes.io/"
	nodeRoleLabel  = "kubernetes.io/role"
)

func nodeCells(n *corev1.Node, now time.Time) []interface{} {
	info := n.Status.NodeInfo
	return []interface{}{
		n.Name, nodeStatus(n), orNone(strings.Join(nodeRoles(n), ",")), age(n.CreationTimestamp, now), info.KubeletVersion,
		nodeAddress(n, corev1.NodeInternalIP), nodeAddress(n, corev1.NodeExternalIP),
		orUnknown(info.OSImage), kernelVersion(info), orUnknown(info.ContainerRuntimeVersion),
	}
}

// kernelVersion is the kernel version with the architecture, as kubectl
// shows it: "6.1.0 (amd64)".
func kernelVersion(info corev1.NodeSystemInfo) string {
	v := orUnknown(info.KernelVersion)
	if info.Architecture != "" {
		v += " (" + info.Architecture + ")"
	}
	return v
}

// nodeStatus is Ready, NotReady or Unknown (no Ready condition), plus
// SchedulingDisabled for cordoned nodes.
func nodeStatus(n *corev1.Node) string {
	status := "Unknown"
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			status = "NotReady"
			if c.Status == corev1.ConditionTrue {
				status = "Ready"
			}
		}
	}
	if n.Spec.Unschedulable {
		status += ",SchedulingDisabled"
	}
	return status
}

func nodeRoles(n *corev1.Node) []string {
	set := map[string]bool{}
	for k, v := range n.Labels {
		switch {
		case strings.HasPrefix(k, nodeRolePrefix) && len(k) > len(nodeRolePrefix):
			set[strings.TrimPrefix(k, nodeRolePrefix)] = true
		case k == nodeRoleLabel && v != "":
			set[v] = true
		}
	}
	roles := make([]string, 0, len(set))
	for r := range set {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	return roles
}

func nodeAddress(n *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}
