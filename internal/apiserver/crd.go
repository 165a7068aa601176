package apiserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/crdschema"
	"github.com/setpoint-dev/setpoint/internal/customresource"
	"github.com/setpoint-dev/setpoint/internal/objects"
	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/watchcache"
	"github.com/setpoint-dev/setpoint/internal/webhookclient"
)

var crdGVR = apiextv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// crdState is what the server serves for one CustomResourceDefinition.
// Only the CRD controller writes it, except terminating, which request
// handlers read.
type crdState struct {
	name string
	uid  types.UID
	// generation is the CRD generation whose spec is served.
	generation int64
	// gvrs are the served versions' resources.
	gvrs []schema.GroupVersionResource
	// group, plural and kind are the accepted names.
	group, plural, kind string
	// terminating is set once the CRD is being deleted: its resources
	// refuse creates while their objects are being removed.
	terminating atomic.Bool
}

// crdController serves the resources of CustomResourceDefinitions: it
// installs a CRD's versions as entries of the resource table, keeps the
// CRD's status (accepted names, conditions, stored versions), and on
// deletion removes every object of the resource before releasing the
// CRD's finalizer. Every API server of a cluster runs one; their writes
// are idempotent.
type crdController struct {
	s *Server
	// mu guards installed; sync holds it for its whole pass.
	mu        sync.Mutex
	installed map[string]*crdState
	// webhooks calls the CRDs' conversion webhooks with reviewCodec.
	webhooks    *webhookclient.Client
	reviewCodec runtime.Codec
}

// crdPoll is how often the controller looks again while a CRD waits for
// its objects to go, or after a failed pass.
const crdPoll = time.Second

// run syncs on every change of a CRD, until ctx ends.
func (c *crdController) run(ctx context.Context) {
	e := c.s.entry(crdGVR)
	if e == nil {
		return
	}
	for ctx.Err() == nil {
		ws, err := c.s.cfg.Storage.Watch(ctx, e.res.KeyPrefix(), 0)
		if err != nil {
			c.s.log.Warn("CRD controller: watch failed", "err", err)
			sleepCtx(ctx, crdPoll)
			continue
		}
		c.watchLoop(ctx, e, ws.Responses())
		ws.Stop()
	}
}

func (c *crdController) watchLoop(ctx context.Context, e *entry, events <-chan storage.WatchResponse) {
	pending := c.syncLogged(ctx)
	tick := time.NewTicker(crdPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case resp, ok := <-events:
			if !ok {
				return
			}
			if err := e.cache.WaitForRevision(ctx, resp.Revision); err != nil && !errors.Is(err, watchcache.ErrStopped) {
				c.s.log.Debug("CRD controller: cache behind", "err", err)
			}
			pending = c.syncLogged(ctx)
		case <-tick.C:
			if pending {
				pending = c.syncLogged(ctx)
			}
		}
	}
}

func (c *crdController) syncLogged(ctx context.Context) (pending bool) {
	pending, err := c.sync(ctx)
	if err != nil && ctx.Err() == nil {
		c.s.log.Warn("CRD controller: sync failed; retrying", "err", err)
		return true
	}
	return pending
}

// sync brings the served resources in line with the CRDs in the cache. It
// reports whether some CRD still waits (for its objects to be deleted).
func (c *crdController) sync(ctx context.Context) (pending bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.s.entry(crdGVR)
	list, _, err := e.cache.List(watchcache.ListOptions{})
	if err != nil {
		return false, err
	}
	crds := make([]*apiextv1.CustomResourceDefinition, 0, len(list))
	for _, obj := range list {
		crds = append(crds, obj.(*apiextv1.CustomResourceDefinition))
	}
	slices.SortFunc(crds, func(a, b *apiextv1.CustomResourceDefinition) int {
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	present := map[string]bool{}
	var errs []error
	for _, crd := range crds {
		present[crd.Name] = true
		p, err := c.syncOne(ctx, e, crd)
		pending = pending || p
		errs = append(errs, err)
	}
	for name, st := range c.installed {
		if !present[name] {
			errs = append(errs, c.uninstall(ctx, st))
		}
	}
	return pending, errors.Join(errs...)
}

func (c *crdController) syncOne(ctx context.Context, e *entry, crd *apiextv1.CustomResourceDefinition) (bool, error) {
	st := c.installed[crd.Name]
	if st != nil && st.uid != crd.UID {
		if err := c.uninstall(ctx, st); err != nil {
			return true, err
		}
		st = nil
	}
	if crd.DeletionTimestamp != nil {
		return c.finalize(ctx, e, crd, st)
	}
	status := crd.Status.DeepCopy()
	if conflict := c.nameConflict(crd); conflict != "" {
		setCRDCondition(status, apiextv1.NamesAccepted, apiextv1.ConditionFalse, "NameConflict", conflict)
		setCRDCondition(status, apiextv1.Established, apiextv1.ConditionFalse, "NotAccepted", "not all names are accepted")
		return false, c.writeStatus(ctx, e, crd, status)
	}
	if st == nil || st.generation != crd.Generation {
		if err := c.install(ctx, crd, st); err != nil {
			setCRDCondition(status, apiextv1.Established, apiextv1.ConditionFalse, "InstallationFailed", err.Error())
			return false, errors.Join(err, c.writeStatus(ctx, e, crd, status))
		}
	}
	status.AcceptedNames = crd.Spec.Names
	setCRDCondition(status, apiextv1.NamesAccepted, apiextv1.ConditionTrue, "NoConflicts", "no conflicts found")
	setCRDCondition(status, apiextv1.Established, apiextv1.ConditionTrue, "InitialNamesAccepted", "the initial names have been accepted")
	if v := storageVersion(crd); v != "" && !slices.Contains(status.StoredVersions, v) {
		status.StoredVersions = append(status.StoredVersions, v)
	}
	return false, c.writeStatus(ctx, e, crd, status)
}

// nameConflict names the installed CRD of the same group whose accepted
// plural or kind crd would take, "" when there is none.
func (c *crdController) nameConflict(crd *apiextv1.CustomResourceDefinition) string {
	for name, st := range c.installed {
		if name == crd.Name || st.group != crd.Spec.Group {
			continue
		}
		switch {
		case st.plural == crd.Spec.Names.Plural:
			return fmt.Sprintf("%q is already in use", crd.Spec.Names.Plural)
		case st.kind == crd.Spec.Names.Kind:
			return fmt.Sprintf("%q is already in use", crd.Spec.Names.Kind)
		}
	}
	return ""
}

// install serves crd's versions, replacing what st served.
func (c *crdController) install(ctx context.Context, crd *apiextv1.CustomResourceDefinition, st *crdState) error {
	conv, err := c.converter(crd)
	if err != nil {
		return err
	}
	resources, err := customresource.Resources(crd, conv)
	if err != nil {
		return err
	}
	next := &crdState{name: crd.Name, uid: crd.UID, generation: crd.Generation,
		group: crd.Spec.Group, plural: crd.Spec.Names.Plural, kind: crd.Spec.Names.Kind}
	for _, r := range resources {
		next.gvrs = append(next.gvrs, r.GVR())
	}
	var remove []schema.GroupVersionResource
	if st != nil {
		remove = st.gvrs
	}
	if err := c.s.replace(ctx, resources, remove, next); err != nil {
		return fmt.Errorf("serve %s: %w", crd.Name, err)
	}
	c.installed[crd.Name] = next
	c.s.log.Info("serving custom resource", "crd", crd.Name, "versions", len(resources))
	return nil
}

func (c *crdController) uninstall(ctx context.Context, st *crdState) error {
	if err := c.s.replace(ctx, nil, st.gvrs, nil); err != nil {
		return err
	}
	delete(c.installed, st.name)
	c.s.log.Info("stopped serving custom resource", "crd", st.name)
	return nil
}

// finalize removes the objects of a deleted CRD, then its finalizer. It
// reports whether objects remain (held by their own finalizers).
func (c *crdController) finalize(ctx context.Context, e *entry, crd *apiextv1.CustomResourceDefinition, st *crdState) (bool, error) {
	if !slices.Contains(crd.Finalizers, crdschema.CleanupFinalizer) {
		return false, nil // another finalizer holds it; nothing of ours to do
	}
	if st != nil {
		st.terminating.Store(true)
		left, err := c.deleteObjects(ctx, st)
		if err != nil || left > 0 {
			status := crd.Status.DeepCopy()
			msg := fmt.Sprintf("CustomResource deletion is in progress: %d objects left", left)
			setCRDCondition(status, apiextv1.Terminating, apiextv1.ConditionTrue, "InstanceDeletionInProgress", msg)
			return true, errors.Join(err, c.writeStatus(ctx, e, crd, status))
		}
		if err := c.uninstall(ctx, st); err != nil {
			return true, err
		}
	}
	_, err := e.store.Mutate(ctx, "", crd.Name, func(obj runtime.Object) error {
		cur := obj.(*apiextv1.CustomResourceDefinition)
		if cur.UID != crd.UID {
			return apierrors.NewConflict(crdGVR.GroupResource(), crd.Name, errors.New("recreated"))
		}
		cur.Finalizers = slices.DeleteFunc(cur.Finalizers, func(f string) bool { return f == crdschema.CleanupFinalizer })
		return nil
	}, objects.WriteOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		err = nil
	}
	return false, err
}

// deleteObjects starts the deletion of every object of st's resource and
// returns how many are still stored.
func (c *crdController) deleteObjects(ctx context.Context, st *crdState) (int, error) {
	e := c.s.entry(st.gvrs[0])
	if e == nil {
		return 0, nil
	}
	items, err := c.listObjects(ctx, e)
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, obj := range items {
		m := objectMeta(obj)
		if m.GetDeletionTimestamp() != nil {
			continue
		}
		uid := m.GetUID()
		_, _, err := e.store.Delete(ctx, m.GetNamespace(), m.GetName(), &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, err)
		}
	}
	items, err = c.listObjects(ctx, e)
	if err != nil {
		return 0, err
	}
	return len(items), errors.Join(errs...)
}

func (c *crdController) listObjects(ctx context.Context, e *entry) ([]runtime.Object, error) {
	list, err := e.store.List(ctx, objects.ListOptions{Label: labels.Everything(), Field: fields.Everything()})
	if err != nil {
		return nil, err
	}
	return meta.ExtractList(list)
}

// crdStatusManager is the field manager of the CRD controller's status
// writes, as kube-apiserver names its own.
const crdStatusManager = "kube-apiserver"

// writeStatus stores status on the CRD when it differs, recording the
// change in managedFields.
func (c *crdController) writeStatus(ctx context.Context, e *entry, crd *apiextv1.CustomResourceDefinition, status *apiextv1.CustomResourceDefinitionStatus) error {
	if equality.Semantic.DeepEqual(*status, crd.Status) {
		return nil // the common case of a pass: nothing to read or write
	}
	_, err := e.store.Mutate(ctx, "", crd.Name, func(obj runtime.Object) error {
		cur := obj.(*apiextv1.CustomResourceDefinition)
		if cur.UID != crd.UID {
			return apierrors.NewConflict(crdGVR.GroupResource(), crd.Name, errors.New("recreated"))
		}
		live := cur.DeepCopy()
		for _, cond := range status.Conditions {
			setCRDCondition(&cur.Status, cond.Type, cond.Status, cond.Reason, cond.Message)
		}
		cur.Status.AcceptedNames = status.AcceptedNames
		cur.Status.StoredVersions = status.StoredVersions
		// kube-apiserver's CRD controllers write the status through its
		// status subresource as the manager "kube-apiserver".
		if e.fm != nil {
			tracked := e.fm.Update(live, cur, crdStatusManager, "status").(*apiextv1.CustomResourceDefinition)
			cur.ManagedFields = tracked.ManagedFields
		}
		return nil
	}, objects.WriteOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone or replaced: the next pass sees the new one
	}
	return err
}

// setCRDCondition sets one condition, keeping its transition time when
// the status does not change.
func setCRDCondition(st *apiextv1.CustomResourceDefinitionStatus, typ apiextv1.CustomResourceDefinitionConditionType,
	status apiextv1.ConditionStatus, reason, msg string) {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != typ {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = metav1.NewTime(time.Now().Truncate(time.Second))
		}
		c.Status, c.Reason, c.Message = status, reason, msg
		return
	}
	st.Conditions = append(st.Conditions, apiextv1.CustomResourceDefinitionCondition{Type: typ, Status: status,
		LastTransitionTime: metav1.NewTime(time.Now().Truncate(time.Second)), Reason: reason, Message: msg})
}

func storageVersion(crd *apiextv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
