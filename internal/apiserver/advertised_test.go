package apiserver_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/rest"
)

// TestKubernetesEndpoints: the server publishes its address and port as
// the Endpoints and EndpointSlice default/kubernetes, as kube-apiserver
// does, and puts them back when they are edited or deleted.
func TestKubernetesEndpoints(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	srv := testserver.Start(t, testserver.Options{Tune: func(c *apiserver.Config) {
		c.Clock = clk
	}})
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	// The test server listens on loopback: the machine's address is
	// advertised.
	ip := ""
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, ad := range addrs {
		if n, ok := ad.(*net.IPNet); ok && n.IP.IsGlobalUnicast() {
			ip = n.IP.String()
			break
		}
	}
	if ip == "" {
		t.Skip("this machine has no global unicast address to advertise")
	}
	c := srv.RESTClient(t)
	ctx := context.Background()
	eps := rest.For[*corev1.Endpoints, *corev1.EndpointsList](c, corev1.SchemeGroupVersion.WithResource("endpoints"), true).Namespace("default")
	slices := rest.For[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList](c,
		discoveryv1.SchemeGroupVersion.WithResource("endpointslices"), true).Namespace("default")
	check := func() error {
		ep, err := eps.Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 1 || ep.Subsets[0].Addresses[0].IP != ip ||
			len(ep.Subsets[0].Ports) != 1 || ep.Subsets[0].Ports[0] != (corev1.EndpointPort{Name: "https", Port: int32(port), Protocol: corev1.ProtocolTCP}) ||
			ep.Labels[discoveryv1.LabelSkipMirror] != "true" {
			return fmt.Errorf("endpoints %+v", ep)
		}
		s, err := slices.Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s.AddressType != discoveryv1.AddressTypeIPv4 || len(s.Endpoints) != 1 || s.Endpoints[0].Addresses[0] != ip ||
			!*s.Endpoints[0].Conditions.Ready || len(s.Ports) != 1 || *s.Ports[0].Name != "https" || *s.Ports[0].Port != int32(port) ||
			len(s.Labels) != 1 || s.Labels[discoveryv1.LabelServiceName] != "kubernetes" {
			return fmt.Errorf("slice %+v", s)
		}
		return nil
	}
	if err := check(); err != nil {
		t.Fatal(err)
	}
	ep, err := eps.Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ep.Subsets[0].Addresses[0].IP = "192.0.2.99"
	if _, err := eps.Update(ctx, ep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := slices.Delete(ctx, "kubernetes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.UntilEvery(t, 20*time.Second, 50*time.Millisecond, "the endpoints repaired", func() error {
		clk.Step(11 * time.Second)
		return check()
	})
}
