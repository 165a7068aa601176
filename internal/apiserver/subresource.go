package apiserver

import (
	"bytes"
	"fmt"
	"net/http"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/objects"
)

func combineNameSelector(sel fields.Selector, name string) fields.Selector {
	byName := fields.OneTermEqualSelector("metadata.name", name)
	if sel == nil || sel.Empty() {
		return byName
	}
	return fields.AndSelectors(sel, byName)
}

func rawExt(b []byte) runtime.RawExtension { return runtime.RawExtension{Raw: b} }

// dispatchSubresource serves status, scale, binding and finalize.
func (s *Server) dispatchSubresource(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType) {
	switch {
	case info.Subresource == "status" && e.res.Status != nil:
		switch info.Verb {
		case "get":
			s.handleGet(w, r, e, info, mt)
		case "update":
			s.handleUpdate(w, r, e, info, mt)
		case "patch":
			s.handlePatch(w, r, e, info, mt)
		default:
			s.resp.writeError(w, r, methodNotAllowed(r.Method, e.res.Resource+"/status"))
		}
	case info.Subresource == "scale" && e.res.Scale != nil:
		s.handleScale(w, r, e, info, mt)
	case info.Subresource == "binding" && e.res.Binding && info.Verb == "create":
		s.handleBinding(w, r, e, info, mt)
	case info.Subresource == "finalize" && e.res.Finalize != nil && info.Verb == "update":
		s.handleUpdate(w, r, e, info, mt)
	default:
		s.resp.writeError(w, r, resourceNotFound())
	}
}

var scaleGVK = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// scaleOf renders the Scale view of obj.
func (s *Server) scaleOf(e *entry, obj runtime.Object) (*autoscalingv1.Scale, error) {
	spec, status, selector, err := e.res.Scale.Replicas(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	m := objectMeta(obj)
	sc := &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
			ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: spec},
		Status: autoscalingv1.ScaleStatus{Replicas: status, Selector: selector},
	}
	sc.SetGroupVersionKind(scaleGVK)
	return sc, nil
}

// handleScale serves get, update and patch of the scale subresource; writes
// change spec.replicas of the main object through its full update path.
func (s *Server) handleScale(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType) {
	if info.Verb == "get" {
		obj, err := e.store.Get(r.Context(), info.Namespace, info.Name)
		if err == nil {
			var sc *autoscalingv1.Scale
			if sc, err = s.scaleOf(e, obj); err == nil {
				s.resp.writeObject(w, r, http.StatusOK, mt, sc)
				return
			}
		}
		s.resp.writeError(w, r, err)
		return
	}
	if info.Verb != "update" && info.Verb != "patch" {
		s.resp.writeError(w, r, methodNotAllowed(r.Method, e.res.Resource+"/scale"))
		return
	}
	dry, body, err := s.readWrite(r)
	var p *patcher
	if err == nil && info.Verb == "patch" {
		p, err = newPatcher(r, body, &autoscalingv1.Scale{}, e.gr())
	}
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	fn := func(current runtime.Object) (runtime.Object, error) {
		if current == nil {
			return nil, apierrors.NewNotFound(e.gr(), info.Name)
		}
		want, err := s.desiredScale(r, e, current, p, body)
		if err != nil {
			return nil, err
		}
		obj := current.DeepCopyObject()
		m := objectMeta(obj)
		m.SetResourceVersion(want.ResourceVersion) // a Scale naming a resourceVersion is conditional
		if err := e.res.Scale.SetReplicas(obj, want.Spec.Replicas); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return obj, nil
	}
	out, _, err := e.store.Update(r.Context(), info.Namespace, info.Name, fn, objects.UpdateOptions{WriteOptions: objects.WriteOptions{DryRun: dry}})
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	sc, err := s.scaleOf(e, out)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	s.resp.writeObject(w, r, http.StatusOK, mt, sc)
}

// desiredScale decodes the Scale a client sent (PUT) or patches the current
// Scale (PATCH), and validates it.
func (s *Server) desiredScale(r *http.Request, e *entry, current runtime.Object, p *patcher, body []byte) (*autoscalingv1.Scale, error) {
	cur, err := s.scaleOf(e, current)
	if err != nil {
		return nil, err
	}
	doc := body
	if p != nil {
		var buf bytes.Buffer
		if err := s.codecs.JSON.Encode(cur, &buf); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if doc, err = p.apply(buf.Bytes()); err != nil {
			return nil, err
		}
	}
	want := &autoscalingv1.Scale{}
	if p != nil {
		_, _, err = s.codecs.JSON.Decode(doc, &scaleGVK, want)
	} else {
		err = s.decodeOptionsBody(r, doc, &scaleGVK, want)
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid Scale: %v", err))
	}
	if p != nil && !p.setsResourceVersion() {
		want.ResourceVersion = ""
	}
	if want.Name != "" && want.Name != cur.Name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", want.Name, cur.Name))
	}
	if want.Spec.Replicas < 0 {
		return nil, apierrors.NewInvalid(scaleGVK.GroupKind(), cur.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "replicas"), want.Spec.Replicas, "must be greater than or equal to 0")})
	}
	return want, nil
}

// handleBinding assigns a pod to a node: POST pods/NAME/binding with a
// Binding whose target is the node.
func (s *Server) handleBinding(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType) {
	body, err := readBody(r, s.cfg.MaxBodyBytes)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	b := &corev1.Binding{}
	bgvk := corev1.SchemeGroupVersion.WithKind("Binding")
	if err := s.decodeOptionsBody(r, body, &bgvk, b); err != nil {
		s.resp.writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("invalid Binding: %v", err)))
		return
	}
	if b.Name != "" && b.Name != info.Name {
		s.resp.writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("the name of the binding (%s) does not match the pod (%s)", b.Name, info.Name)))
		return
	}
	if b.Target.Name == "" || (b.Target.Kind != "" && b.Target.Kind != "Node") {
		s.resp.writeError(w, r, apierrors.NewInvalid(bgvk.GroupKind(), info.Name, field.ErrorList{
			field.Required(field.NewPath("target", "name"), "a Node name is required")}))
		return
	}
	dry, err := dryRun(r)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	_, err = e.store.Mutate(r.Context(), info.Namespace, info.Name, func(obj runtime.Object) error {
		pod := obj.(*corev1.Pod)
		if b.UID != "" && b.UID != pod.UID {
			return apierrors.NewConflict(e.gr(), info.Name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", b.UID, pod.UID))
		}
		if pod.DeletionTimestamp != nil {
			return apierrors.NewConflict(e.gr(), info.Name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", info.Name))
		}
		if pod.Spec.NodeName != "" {
			return apierrors.NewConflict(e.gr(), info.Name, fmt.Errorf("pod %s is already assigned to node %q", info.Name, pod.Spec.NodeName))
		}
		pod.Spec.NodeName = b.Target.Name
		setPodScheduled(pod, s.cfg.Clock.Now())
		return nil
	}, objects.WriteOptions{DryRun: dry})
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	s.resp.writeObject(w, r, http.StatusCreated, mediaType{Type: mt.Type}, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated,
	})
}

func setPodScheduled(pod *corev1.Pod, now interface{ Unix() int64 }) {
	t := metav1.Unix(now.Unix(), 0)
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type == corev1.PodScheduled {
			c.Status, c.LastTransitionTime, c.Reason, c.Message = corev1.ConditionTrue, t, "", ""
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: t,
	})
}
