package apiserver

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/objects"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// advertisedInterval is how often the advertised objects are checked, as
// kube-apiserver's endpoint reconciler does (--endpoint-reconciler-type
// lease renews every 10 s).
const advertisedInterval = 10 * time.Second

// advertisement is where clients reach this server: the advertise address
// when it is an IP, else the listen host when it is a specific IP, else
// the machine's first global unicast address. Loopback addresses are not
// valid endpoint addresses (kube-apiserver's validation refuses them), so
// a server listening only on loopback advertises the machine's address;
// ok is false when there is none.
func (s *Server) advertisement(host, port string) (registry.Advertisement, bool) {
	p, _ := strconv.Atoi(port)
	a := registry.Advertisement{Port: int32(p)}
	for _, h := range []string{s.cfg.AdvertiseAddress, host} {
		if ip := net.ParseIP(h); ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() {
			a.IP = ip.String()
			return a, true
		}
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return a, false
	}
	for _, ad := range addrs {
		if n, ok := ad.(*net.IPNet); ok && n.IP.IsGlobalUnicast() {
			a.IP = n.IP.String()
			return a, true
		}
	}
	return a, false
}

// advertisedLoop keeps the advertised objects until ctx ends.
func (s *Server) advertisedLoop(ctx context.Context, a registry.Advertisement) {
	t := s.cfg.Clock.NewTicker(advertisedInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if err := s.reconcileAdvertised(ctx, a); err != nil && ctx.Err() == nil {
			s.log.Warn("keeping the kubernetes endpoints", "err", err)
		}
	}
}

// reconcileAdvertised creates the advertised objects (registry.Resource.
// Advertised) that are missing and resets the ones whose content differs.
func (s *Server) reconcileAdvertised(ctx context.Context, a registry.Advertisement) error {
	for _, res := range s.table.builtin {
		if res.Advertised == nil {
			continue
		}
		e := s.entry(res.GVR())
		for _, want := range res.Advertised(a) {
			m := objectMeta(want)
			cur, err := e.store.Get(ctx, m.GetNamespace(), m.GetName())
			switch {
			case apierrors.IsNotFound(err):
				if _, err := e.store.Create(ctx, m.GetNamespace(), want, objects.WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					return fmt.Errorf("create %s %s: %w", res.Resource, m.GetName(), err)
				}
				continue
			case err != nil:
				return fmt.Errorf("read %s %s: %w", res.Resource, m.GetName(), err)
			}
			if sameContent(cur, want) {
				continue
			}
			reset := func(obj runtime.Object) error { copyContent(obj, want); return nil }
			if _, err := e.store.Mutate(ctx, m.GetNamespace(), m.GetName(), reset, objects.WriteOptions{}); err != nil {
				return fmt.Errorf("reset %s %s: %w", res.Resource, m.GetName(), err)
			}
		}
	}
	return nil
}

// copyContent sets dst's fields but TypeMeta and ObjectMeta, and its
// labels, to src's (both of one struct kind).
func copyContent(dst, src runtime.Object) {
	d, sv := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for i := range d.NumField() {
		switch d.Type().Field(i).Name {
		case "TypeMeta", "ObjectMeta":
			continue
		}
		d.Field(i).Set(sv.Field(i))
	}
	objectMeta(dst).SetLabels(objectMeta(src).GetLabels())
}

// sameContent says whether cur already holds want's content and labels.
func sameContent(cur, want runtime.Object) bool {
	cp := cur.DeepCopyObject()
	copyContent(cp, want)
	return equality.Semantic.DeepEqual(cp, cur)
}
