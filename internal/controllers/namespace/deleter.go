package namespace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/rest"
)

// podsResource is deleted before every other resource of a namespace.
var podsResource = schema.GroupResource{Resource: "pods"}

// leftover is what remains of one resource after a deletion pass.
type leftover struct {
	count      int
	finalizers map[string]int
	// estimate is how long the remaining objects are expected to take.
	estimate time.Duration
}

// deleteAllContent deletes every namespaced object of ns, resource by
// resource, records the deletion conditions on the namespace, and returns
// the namespace as now stored and how long the content left is expected to
// take (0: nothing left). Failures of single resources do not stop the
// others; they are joined into the error.
func (r *reconciler) deleteAllContent(ctx context.Context, ns *corev1.Namespace) (*corev1.Namespace, time.Duration, error) {
	var conds conditions
	var errs []error
	found := discover(ctx, r.c)
	if found.discoveryErr != nil {
		errs = append(errs, found.discoveryErr)
		conds.discovery(found.discoveryErr)
	}
	if found.parseErr != nil {
		errs = append(errs, found.parseErr)
		conds.parsing(found.parseErr)
	}
	var deleteErrs []error
	objects := map[schema.GroupResource]int{}
	finalizers := map[string]int{}
	var estimate time.Duration
	// Pods go first, and the rest only once no pod is left, as Kubernetes'
	// namespace controller does (OrderedNamespaceDeletion): a pod never
	// outlives the ConfigMaps, Secrets and ServiceAccounts it uses.
	resources := found.resources
	for i, res := range found.resources {
		if res.gvr.GroupResource() != podsResource {
			continue
		}
		resources = append(slices.Clone(found.resources[:i]), found.resources[i+1:]...)
		left, err := r.deleteResource(ctx, res, ns.Name)
		if err != nil {
			deleteErrs = append(deleteErrs, err)
		}
		estimate = left.estimate
		if left.count > 0 {
			objects[podsResource] = left.count
			for f, n := range left.finalizers {
				finalizers[f] += n
			}
			resources = nil // the rest waits for the pods
		}
		break
	}
	for _, res := range resources {
		left, err := r.deleteResource(ctx, res, ns.Name)
		if err != nil {
			deleteErrs = append(deleteErrs, err)
		}
		estimate = max(estimate, left.estimate)
		if left.count > 0 {
			objects[res.gvr.GroupResource()] = left.count
			for f, n := range left.finalizers {
				finalizers[f] += n
			}
		}
	}
	if len(deleteErrs) > 0 {
		conds.deletion(deleteErrs)
		errs = append(errs, deleteErrs...)
	}
	conds.remaining(objects, finalizers)
	cp := ns.DeepCopy()
	if conds.apply(cp, metav1.NewTime(r.clock.Now())) {
		updated, err := r.namespaces.UpdateStatus(ctx, cp, metav1.UpdateOptions{})
		if err != nil {
			r.log.Error("cannot update namespace conditions", "namespace", ns.Name, "err", err)
		} else {
			ns = updated
		}
	}
	return ns, estimate, errors.Join(errs...)
}

// deleteResource deletes the objects of one resource in namespace ns
// (deletecollection where supported, else list and delete each, with
// background propagation) and lists what is left.
func (r *reconciler) deleteResource(ctx context.Context, res resource, ns string) (leftover, error) {
	dyn := rest.Dynamic(r.c, res.gvr, true).Namespace(ns)
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &background}
	collection := res.supports("deletecollection")
	if collection {
		err := dyn.DeleteCollection(ctx, opts, metav1.ListOptions{})
		switch {
		case apierrors.IsMethodNotSupported(err) || apierrors.IsNotFound(err):
			collection = false
		case err != nil:
			return leftover{}, fmt.Errorf("delete collection %s in %s: %w", res.gvr, ns, err)
		}
	}
	if !res.supports("list") {
		return leftover{}, nil
	}
	list, err := dyn.List(ctx, metav1.ListOptions{})
	if err != nil {
		return leftover{}, fmt.Errorf("list %s in %s: %w", res.gvr, ns, err)
	}
	if !collection {
		for i := range list.Items {
			if err := r.deleteOne(ctx, dyn, &list.Items[i], opts); err != nil {
				return leftover{}, err
			}
		}
		if list, err = dyn.List(ctx, metav1.ListOptions{}); err != nil {
			return leftover{}, fmt.Errorf("list %s in %s: %w", res.gvr, ns, err)
		}
	}
	return r.leftover(res, ns, list.Items)
}

func (r *reconciler) deleteOne(ctx context.Context, dyn *rest.Resource[*unstructured.Unstructured, *unstructured.UnstructuredList], obj *unstructured.Unstructured, opts metav1.DeleteOptions) error {
	if obj.GetDeletionTimestamp() != nil {
		return nil // already on its way
	}
	if err := dyn.Delete(ctx, obj.GetName(), opts); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// leftover sums up the objects still present after deletion. Pods still
// terminating are expected to take their remaining grace period; objects
// held by finalizers FinalizerEstimate; anything else left is an error.
func (r *reconciler) leftover(res resource, ns string, items []unstructured.Unstructured) (leftover, error) {
	if len(items) == 0 {
		return leftover{}, nil
	}
	left := leftover{count: len(items), finalizers: map[string]int{}}
	for i := range items {
		for _, f := range items[i].GetFinalizers() {
			left.finalizers[f]++
		}
	}
	if res.gvr.GroupResource() == (schema.GroupResource{Resource: "pods"}) {
		left.estimate = r.podEstimate(items)
	}
	switch {
	case left.estimate > 0:
		return left, nil
	case len(left.finalizers) > 0:
		left.estimate = r.opts.FinalizerEstimate
		return left, nil
	}
	return left, fmt.Errorf("unexpected items still remain in namespace %s for %s", ns, res.gvr)
}

// podEstimate is the longest remaining grace period of terminating pods
// (at least a second while one is still within it).
func (r *reconciler) podEstimate(items []unstructured.Unstructured) time.Duration {
	var out time.Duration
	now := r.clock.Now()
	for i := range items {
		dt := items[i].GetDeletionTimestamp()
		if dt == nil {
			continue
		}
		if left := dt.Sub(now); left > 0 {
			out = max(out, left.Truncate(time.Second)+time.Second)
		}
	}
	return out
}
