package endpointslice

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/ctrltest"
	"github.com/setpoint-dev/setpoint/internal/controllers/endpoints"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ns = "default"

var now = metav1.DeleteOptions{GracePeriodSeconds: new(int64)}

func start(t *testing.T, opts Options, withEndpoints bool) *ctrltest.Env {
	env := ctrltest.Start(t, func(e *ctrltest.Env) error {
		if withEndpoints {
			if err := endpoints.Add(e.Mgr, endpoints.Options{}); err != nil {
				return err
			}
		}
		return Add(e.Mgr, opts)
	})
	env.CreateNode("n1", map[string]string{corev1.LabelTopologyZone: "zone-a"})
	env.CreateNode("n2", map[string]string{corev1.LabelTopologyZone: "zone-b"})
	return env
}

func sliceClient(env *ctrltest.Env) *rest.Resource[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList] {
	return rest.For[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList](env.Client, sliceGVR, true).Namespace(ns)
}

// slicesOf lists the managed slices of a Service.
func slicesOf(env *ctrltest.Env, svc string) []discoveryv1.EndpointSlice {
	env.T.Helper()
	list, err := sliceClient(env).List(context.Background(), metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + svc + "," + discoveryv1.LabelManagedBy + "=" + ManagedBy})
	if err != nil {
		env.T.Fatal(err)
	}
	return list.Items
}

func str(p *string) string {
	if p == nil {
		return "-"
	}
	return *p
}

func flag(p *bool) string {
	if p == nil {
		return "-"
	}
	if *p {
		return "T"
	}
	return "F"
}

// describe renders slices, independent of slice names and order, as
// "type [ports] ip/pod/node/zone/host/ready serving terminating".
func describe(list []discoveryv1.EndpointSlice) string {
	var lines []string
	for _, s := range list {
		var ports []string
		for _, p := range s.Ports {
			ap := ""
			if p.AppProtocol != nil {
				ap = "(" + *p.AppProtocol + ")"
			}
			ports = append(ports, fmt.Sprintf("%s:%d/%s%s", str(p.Name), *p.Port, *p.Protocol, ap))
		}
		sort.Strings(ports)
		if len(s.Endpoints) == 0 {
			lines = append(lines, fmt.Sprintf("%s [%s] placeholder", s.AddressType, strings.Join(ports, " ")))
		}
		for _, ep := range s.Endpoints {
			lines = append(lines, fmt.Sprintf("%s [%s] %s/%s/%s/%s/%s/%s%s%s", s.AddressType, strings.Join(ports, " "),
				strings.Join(ep.Addresses, ","), ep.TargetRef.Name, str(ep.NodeName), str(ep.Zone), str(ep.Hostname),
				flag(ep.Conditions.Ready), flag(ep.Conditions.Serving), flag(ep.Conditions.Terminating)))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func waitSlices(env *ctrltest.Env, svc, want string) []discoveryv1.EndpointSlice {
	env.T.Helper()
	var got []discoveryv1.EndpointSlice
	env.Eventually("slices of "+svc, func() error {
		got = slicesOf(env, svc)
		if d := describe(got); d != want {
			return fmt.Errorf("got\n%s\nwant\n%s", d, want)
		}
		return nil
	})
	return got
}
