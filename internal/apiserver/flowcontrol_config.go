package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/flowcontrol"
	"github.com/setpoint-dev/setpoint/internal/objects"
	fcreg "github.com/setpoint-dev/setpoint/internal/registry/flowcontrol"
	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/watchcache"
)

var (
	flowSchemasGVR    = schema.GroupVersionResource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "flowschemas"}
	priorityLevelsGVR = schema.GroupVersionResource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "prioritylevelconfigurations"}
)

// flowControlPoll is how often the configuration is read again after a
// failed pass.
const flowControlPoll = time.Second

func newFlowControl(cfg Config, m *metrics) *flowcontrol.Controller {
	fss, pls := fcreg.MandatoryConfig()
	return flowcontrol.New(flowcontrol.Options{
		ServerConcurrencyLimit: cfg.MaxReadInFlight + cfg.MaxMutatingInFlight,
		MandatoryFlowSchemas:   fss, MandatoryPriorityLevels: pls,
		Clock: cfg.Clock, Metrics: flowcontrol.NewMetrics(m.registry),
	})
}

// ensureFlowControlConfig brings the stored configuration objects in line
// with the built-in ones at start, as kube-apiserver's config producer:
// the bootstrap has created the missing ones; this updates those that are
// to be kept up to date and deletes those that are no longer part of the
// configuration.
func (s *Server) ensureFlowControlConfig(ctx context.Context) error {
	fse, ple := s.entry(flowSchemasGVR), s.entry(priorityLevelsGVR)
	if s.apf == nil || fse == nil || ple == nil {
		return nil
	}
	wantFS, wantPL := fcreg.Config()
	fsByName := map[string]*flowcontrolv1.FlowSchema{}
	for _, fs := range wantFS {
		fsByName[fs.Name] = fs
	}
	plByName := map[string]*flowcontrolv1.PriorityLevelConfiguration{}
	for _, pl := range wantPL {
		plByName[pl.Name] = pl
	}
	fss, pls, err := s.flowControlObjects()
	if err != nil {
		return err
	}
	var errs []error
	for _, fs := range fss {
		if want := fsByName[fs.Name]; want != nil {
			errs = append(errs, s.autoUpdate(ctx, fse, fs, fcreg.AutoUpdatedFlowSchema(fs, want)))
		} else if fcreg.Obsolete(fs.Annotations) {
			errs = append(errs, s.deleteObsolete(ctx, fse, fs.Name))
		}
	}
	for _, pl := range pls {
		if want := plByName[pl.Name]; want != nil {
			errs = append(errs, s.autoUpdate(ctx, ple, pl, fcreg.AutoUpdatedPriorityLevel(pl, want)))
		} else if fcreg.Obsolete(pl.Annotations) {
			errs = append(errs, s.deleteObsolete(ctx, ple, pl.Name))
		}
	}
	return errors.Join(errs...)
}

// autoUpdate stores want (nil: nothing to do) over cur: spec and
// annotations, a new generation, managed by the config producer.
func (s *Server) autoUpdate(ctx context.Context, e *entry, cur, want runtime.Object) error {
	if want == nil || isNilObject(want) {
		return nil
	}
	wm := objectMeta(want)
	_, err := e.store.Mutate(ctx, "", wm.GetName(), func(obj runtime.Object) error {
		m := objectMeta(obj)
		if m.GetUID() != objectMeta(cur).GetUID() {
			return apierrors.NewConflict(e.gr(), m.GetName(), errors.New("recreated"))
		}
		live := obj.DeepCopyObject()
		switch o := obj.(type) {
		case *flowcontrolv1.FlowSchema:
			o.Spec = want.(*flowcontrolv1.FlowSchema).Spec
		case *flowcontrolv1.PriorityLevelConfiguration:
			o.Spec = want.(*flowcontrolv1.PriorityLevelConfiguration).Spec
		}
		m.SetAnnotations(wm.GetAnnotations())
		m.SetGeneration(m.GetGeneration() + 1)
		if e.fm != nil {
			tracked := e.fm.Update(live, obj, fcreg.ProducerFieldManager, "")
			m.SetManagedFields(objectMeta(tracked).GetManagedFields())
		}
		return nil
	}, objects.WriteOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone or replaced meanwhile: the next start judges it
	}
	if err != nil {
		return fmt.Errorf("auto-update %s %s: %w", e.res.Resource, wm.GetName(), err)
	}
	return nil
}

func isNilObject(o runtime.Object) bool {
	switch v := o.(type) {
	case *flowcontrolv1.FlowSchema:
		return v == nil
	case *flowcontrolv1.PriorityLevelConfiguration:
		return v == nil
	}
	return false
}

func (s *Server) deleteObsolete(ctx context.Context, e *entry, name string) error {
	if _, _, err := e.store.Delete(ctx, "", name, nil); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete obsolete %s %s: %w", e.res.Resource, name, err)
	}
	return nil
}

// flowControlObjects lists the configuration objects from the caches.
func (s *Server) flowControlObjects() ([]*flowcontrolv1.FlowSchema, []*flowcontrolv1.PriorityLevelConfiguration, error) {
	fl, _, err := s.entry(flowSchemasGVR).cache.List(watchcache.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	pl, _, err := s.entry(priorityLevelsGVR).cache.List(watchcache.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	fss := make([]*flowcontrolv1.FlowSchema, 0, len(fl))
	for _, o := range fl {
		fss = append(fss, o.(*flowcontrolv1.FlowSchema))
	}
	pls := make([]*flowcontrolv1.PriorityLevelConfiguration, 0, len(pl))
	for _, o := range pl {
		pls = append(pls, o.(*flowcontrolv1.PriorityLevelConfiguration))
	}
	return fss, pls, nil
}

// flowControlLoop keeps priority and fairness on the stored
// configuration: every change of a FlowSchema or priority level takes
// effect at once, and each FlowSchema's Dangling condition says whether
// its priority level exists.
func (s *Server) flowControlLoop(ctx context.Context) {
	fse, ple := s.entry(flowSchemasGVR), s.entry(priorityLevelsGVR)
	if s.apf == nil || fse == nil || ple == nil {
		return
	}
	changed := make(chan int64, 1)
	var watches sync.WaitGroup
	defer watches.Wait()
	for _, e := range []*entry{fse, ple} {
		watches.Go(func() { s.watchPrefix(ctx, e, changed) })
	}
	pending := true
	tick := time.NewTicker(flowControlPoll)
	defer tick.Stop()
	for {
		if pending {
			pending = !s.syncFlowControl(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case rev := <-changed:
			for _, e := range []*entry{fse, ple} {
				if err := e.cache.WaitForRevision(ctx, rev); err != nil && !errors.Is(err, watchcache.ErrStopped) {
					s.log.Debug("flow control: cache behind", "err", err)
				}
			}
			pending = true
		case <-tick.C:
		}
	}
}

// watchPrefix reports the revision of every change of e's objects.
func (s *Server) watchPrefix(ctx context.Context, e *entry, changed chan int64) {
	for ctx.Err() == nil {
		ws, err := s.cfg.Storage.Watch(ctx, e.res.KeyPrefix(), 0)
		if err != nil {
			sleepCtx(ctx, flowControlPoll)
			continue
		}
		s.forwardRevisions(ctx, ws.Responses(), changed)
		ws.Stop()
	}
}

func (s *Server) forwardRevisions(ctx context.Context, events <-chan storage.WatchResponse, changed chan<- int64) {
	for {
		select {
		case <-ctx.Done():
			return
		case resp, ok := <-events:
			if !ok {
				return
			}
			select {
			case changed <- resp.Revision:
			case <-ctx.Done():
				return
			}
		}
	}
}

// syncFlowControl hands the configuration to the controller and writes
// the Dangling conditions; it reports success.
func (s *Server) syncFlowControl(ctx context.Context) bool {
	fss, pls, err := s.flowControlObjects()
	if err != nil {
		s.log.Warn("flow control: read configuration", "err", err)
		return false
	}
	s.apf.Update(fss, pls)
	levels := map[string]bool{}
	for _, pl := range pls {
		levels[pl.Name] = true
	}
	ok := true
	for _, fs := range fss {
		if err := s.writeDangling(ctx, fs, !levels[fs.Spec.PriorityLevelConfiguration.Name]); err != nil && ctx.Err() == nil {
			s.log.Warn("flow control: write FlowSchema status", "flowschema", fs.Name, "err", err)
			ok = false
		}
	}
	return ok
}

// writeDangling sets the FlowSchema's Dangling condition, when it
// differs, by a server-side apply of the status as kube-apiserver's
// config consumer does.
func (s *Server) writeDangling(ctx context.Context, fs *flowcontrolv1.FlowSchema, dangling bool) error {
	want := fcreg.DanglingCondition(fs.Spec.PriorityLevelConfiguration.Name, dangling, metav1.NewTime(s.cfg.Clock.Now().Truncate(time.Second)))
	if hasCondition(fs.Status.Conditions, want) {
		return nil
	}
	e := s.entry(flowSchemasGVR)
	patch, err := json.Marshal(map[string]any{
		"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
		"metadata": map[string]any{"name": fs.Name},
		"status":   map[string]any{"conditions": []flowcontrolv1.FlowSchemaCondition{want}},
	})
	if err != nil {
		return err
	}
	_, err = e.store.Mutate(ctx, "", fs.Name, func(obj runtime.Object) error {
		cur := obj.(*flowcontrolv1.FlowSchema)
		if cur.UID != fs.UID {
			return apierrors.NewConflict(e.gr(), fs.Name, errors.New("recreated"))
		}
		if hasCondition(cur.Status.Conditions, want) {
			return nil // someone wrote it meanwhile: nothing to change
		}
		if e.fm != nil {
			if out, _, err := e.fm.Apply(cur.DeepCopy(), patch, fcreg.ConsumerFieldManager, "status", true, false); err == nil {
				applied := out.(*flowcontrolv1.FlowSchema)
				cur.ManagedFields = applied.ManagedFields
			}
		}
		setCondition(&cur.Status, want)
		return nil
	}, objects.WriteOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone or replaced: the next pass sees the new one
	}
	return err
}

// hasCondition reports whether conds hold want, its time aside.
func hasCondition(conds []flowcontrolv1.FlowSchemaCondition, want flowcontrolv1.FlowSchemaCondition) bool {
	for _, c := range conds {
		if c.Type == want.Type && c.Status == want.Status && c.Reason == want.Reason && c.Message == want.Message {
			return true
		}
	}
	return false
}

func setCondition(st *flowcontrolv1.FlowSchemaStatus, c flowcontrolv1.FlowSchemaCondition) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			if apiequality.Semantic.DeepEqual(st.Conditions[i], c) {
				return
			}
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}
