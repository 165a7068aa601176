package printers

import (
	"fmt"
	"slices"
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// networkingTable returns the table of a networking.k8s.io/v1 kind.
func networkingTable(kind string, now func() time.Time) registry.TableConvertor {
	switch kind {
	case "Ingress":
		return newTable(ingressColumns, ingressCells, now)
	case "IngressClass":
		return newTable(ingressClassColumns, ingressClassCells, now)
	case "NetworkPolicy":
		return newTable(networkPolicyColumns, networkPolicyCells, now)
	case "IPAddress":
		return newTable(ipAddressColumns, ipAddressCells, now)
	case "ServiceCIDR":
		return newTable(serviceCIDRColumns, serviceCIDRCells, now)
	}
	return nil
}

var ingressColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Class", "string", "The IngressClass of the ingress."),
	column("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule"),
	column("Address", "string", "Address is a list containing ingress points for the load-balancer"),
	column("Ports", "string", "Ports of TLS configurations that open"),
	ageColumn,
}

func ingressCells(ing *networkingv1.Ingress, now time.Time) []interface{} {
	class := "<none>"
	if ing.Spec.IngressClassName != nil {
		class = *ing.Spec.IngressClassName
	}
	ports := "80"
	if len(ing.Spec.TLS) != 0 {
		ports = "80, 443"
	}
	return []interface{}{ing.Name, class, ingressHosts(ing.Spec.Rules), ingressAddress(ing.Status.LoadBalancer), ports,
		age(ing.CreationTimestamp, now)}
}

// ingressHosts lists up to three rule hosts, "*" when no rule names one.
func ingressHosts(rules []networkingv1.IngressRule) string {
	var hosts []string
	more := false
	for _, r := range rules {
		if len(hosts) == 3 {
			more = true
			break
		}
		if r.Host != "" {
			hosts = append(hosts, r.Host)
		}
	}
	if len(hosts) == 0 {
		return "*"
	}
	s := strings.Join(hosts, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", s, len(rules)-3)
	}
	return s
}

// ingressAddress lists the load balancer's IPs (or host names), sorted and
// without repeats; the server renders the wide form, unclipped.
func ingressAddress(st networkingv1.IngressLoadBalancerStatus) string {
	var out []string
	for _, in := range st.Ingress {
		a := in.IP
		if a == "" {
			a = in.Hostname
		}
		if a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

var ingressClassColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Controller", "string", "Controller that is responsible for handling this class"),
	column("Parameters", "string", "A reference to a resource with additional parameters"),
	ageColumn,
}

func ingressClassCells(c *networkingv1.IngressClass, now time.Time) []interface{} {
	params := "<none>"
	if p := c.Spec.Parameters; p != nil {
		params = p.Kind
		if p.APIGroup != nil {
			params += "." + *p.APIGroup
		}
		params += "/" + p.Name
	}
	return []interface{}{c.Name, c.Spec.Controller, params, age(c.CreationTimestamp, now)}
}

var networkPolicyColumns = []metav1.TableColumnDefinition{
	nameColumn(0), column("Pod-Selector", "string", "The pods the policy applies to."), ageColumn,
}

func networkPolicyCells(np *networkingv1.NetworkPolicy, now time.Time) []interface{} {
	return []interface{}{np.Name, metav1.FormatLabelSelector(&np.Spec.PodSelector), age(np.CreationTimestamp, now)}
}

// ipAddressColumns: kube-apiserver v1.37 defines no Age column for
// IPAddresses, though its rows carry the age as a third cell; so do ours.
var ipAddressColumns = []metav1.TableColumnDefinition{
	nameColumn(0), column("ParentRef", "string", "The object the address is allocated to."),
}

func ipAddressCells(ip *networkingv1.IPAddress, now time.Time) []interface{} {
	parent := "<none>"
	if r := ip.Spec.ParentRef; r != nil {
		parent = strings.ToLower(schema.GroupResource{Group: r.Group, Resource: r.Resource}.String())
		if r.Namespace != "" {
			parent += "/" + r.Namespace
		}
		parent += "/" + r.Name
	}
	return []interface{}{ip.Name, parent, age(ip.CreationTimestamp, now)}
}

var serviceCIDRColumns = []metav1.TableColumnDefinition{
	nameColumn(0), column("CIDRs", "string", "The IP blocks service addresses are allocated from."), ageColumn,
}

func serviceCIDRCells(c *networkingv1.ServiceCIDR, now time.Time) []interface{} {
	return []interface{}{c.Name, strings.Join(c.Spec.CIDRs, ","), age(c.CreationTimestamp, now)}
}
