package aggregator

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

var apiServicesGVR = apiregv1.SchemeGroupVersion.WithResource("apiservices")

// aggregatorUser is who the aggregator is to aggregated servers when it
// checks and describes them.
var aggregatorUser = registry.UserInfo{Name: "system:kube-aggregator", Groups: []string{"system:masters"}}

// Sync checks every APIService once, writes the conditions that changed,
// refreshes the backends' documents and publishes the result.
func (a *Aggregator) Sync(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	objs := a.cfg.Env.Objects(apiServicesGVR)
	if objs == nil {
		return nil
	}
	list, err := objs.List(ctx, "", nil, nil)
	if err != nil {
		return fmt.Errorf("list APIServices: %w", err)
	}
	prev := a.current.Load()
	next := &snapshot{byGV: make(map[schema.GroupVersion]*backend, len(list))}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var writes []conditionWrite
	for _, o := range list {
		s := o.(*apiregv1.APIService)
		gv := schema.GroupVersion{Group: s.Spec.Group, Version: s.Spec.Version}
		wg.Go(func() {
			b, w := a.syncOne(ctx, s, prev.byGV[gv])
			mu.Lock()
			defer mu.Unlock()
			next.byGV[gv] = b
			if w != nil {
				writes = append(writes, *w)
			}
		})
	}
	wg.Wait()
	// Availability is published at once (requests are proxied, or answered
	// 503, from now), before the conditions that report it are written: a
	// client that reads a condition finds the group-version routed as it
	// says. The documents of the available backends follow once fetched.
	a.current.Store(next)
	var errs []error
	for _, w := range writes {
		if err := a.writeCondition(ctx, w.s, w.cond); err != nil {
			errs = append(errs, err)
		}
	}
	next = a.fetchDocuments(ctx, prev, next)
	a.current.Store(next)
	if a.cfg.OnChange != nil && changed(prev, next) {
		a.cfg.OnChange()
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// conditionWrite is an Available condition a sync found for an APIService.
type conditionWrite struct {
	s    *apiregv1.APIService
	cond apiregv1.APIServiceCondition
}

// syncOne checks one APIService; old is its backend of the last sync. It
// returns the Available condition to write, nil when the check could not
// tell (the APIService keeps its condition).
func (a *Aggregator) syncOne(ctx context.Context, s *apiregv1.APIService, old *backend) (*backend, *conditionWrite) {
	b := &backend{name: s.Name, gv: schema.GroupVersion{Group: s.Spec.Group, Version: s.Spec.Version}, spec: s.Spec}
	if s.Spec.Service == nil {
		b.local, b.avail = true, true
		return b, nil
	}
	b.local = a.cfg.Local(b.gv)
	if old != nil && old.rt != nil && old.rt.key == transportKey(&s.Spec) {
		b.rt = old.rt
	} else if b.rt, b.rtErr = newTransport(&s.Spec, a.cfg.ProxyClientCert); b.rtErr != nil {
		a.cfg.Logger.Warn("APIService transport", "name", s.Name, "err", b.rtErr)
	}
	cond, ok := a.availability(ctx, s, b)
	if !ok {
		b.avail = helper.IsAPIServiceConditionTrue(s, apiregv1.Available)
		return b, nil
	}
	b.avail = cond.Status == apiregv1.ConditionTrue
	return b, &conditionWrite{s: s, cond: cond}
}

// fetchDocuments refreshes the discovery and OpenAPI documents of every
// proxied backend of next (prev holds the last ones), returning a new
// snapshot with them.
func (a *Aggregator) fetchDocuments(ctx context.Context, prev, next *snapshot) *snapshot {
	withDocs := &snapshot{byGV: make(map[schema.GroupVersion]*backend, len(next.byGV))}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for gv, b := range next.byGV {
		if b.local {
			mu.Lock()
			withDocs.byGV[gv] = b
			mu.Unlock()
			continue
		}
		wg.Go(func() {
			old := prev.byGV[gv]
			nb := *b
			nb.discover = a.fetchDiscovery(ctx, &nb, old)
			nb.openapi = a.fetchOpenAPI(ctx, &nb, old)
			mu.Lock()
			defer mu.Unlock()
			withDocs.byGV[gv] = &nb
		})
	}
	wg.Wait()
	return withDocs
}

// changed reports whether the aggregated group-versions publish something
// else than before.
func changed(prev, next *snapshot) bool {
	if len(prev.byGV) != len(next.byGV) {
		return true
	}
	for gv, n := range next.byGV {
		p := prev.byGV[gv]
		if p == nil || p.local != n.local || p.avail != n.avail ||
			p.spec.GroupPriorityMinimum != n.spec.GroupPriorityMinimum || p.spec.VersionPriority != n.spec.VersionPriority ||
			p.discover.hash != n.discover.hash || p.openapi.hash != n.openapi.hash {
			return true
		}
	}
	return false
}
