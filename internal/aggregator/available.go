package aggregator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"
)

var (
	servicesGVR       = corev1.SchemeGroupVersion.WithResource("services")
	endpointSlicesGVR = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")
)

// The discovery check: attempts made at once (one success is enough), the
// timeout of each request, and the wait after which an attempt is given up.
const (
	checkAttempts = 5
	checkTimeout  = 5 * time.Second
	checkGiveUp   = 6 * time.Second
)

// availability checks an APIService with a service as kube-aggregator's
// remote availability controller does and returns its Available
// condition; ok is false when nothing can be concluded (no transport).
func (a *Aggregator) availability(ctx context.Context, s *apiregv1.APIService, b *backend) (apiregv1.APIServiceCondition, bool) {
	ref := s.Spec.Service
	cond := func(st apiregv1.ConditionStatus, reason, msg string) (apiregv1.APIServiceCondition, bool) {
		return apiregv1.APIServiceCondition{Type: apiregv1.Available, Status: st, Reason: reason, Message: msg,
			LastTransitionTime: metav1.NewTime(a.cfg.Clock.Now().Truncate(time.Second))}, true
	}
	obj, err := a.cfg.Env.Objects(servicesGVR).Get(ctx, ref.Namespace, ref.Name)
	if apierrors.IsNotFound(err) {
		return cond(apiregv1.ConditionFalse, "ServiceNotFound", fmt.Sprintf("service/%s in %q is not present", ref.Name, ref.Namespace))
	} else if err != nil {
		return cond(apiregv1.ConditionUnknown, "ServiceAccessError", fmt.Sprintf("service/%s in %q cannot be checked due to: %v", ref.Name, ref.Namespace, err))
	}
	if svc := obj.(*corev1.Service); svc.Spec.Type == corev1.ServiceTypeClusterIP {
		i := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == *ref.Port })
		if i < 0 {
			return cond(apiregv1.ConditionFalse, "ServicePortError", fmt.Sprintf("service/%s in %q is not listening on port %d", ref.Name, ref.Namespace, *ref.Port))
		}
		portName := svc.Spec.Ports[i].Name
		sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: ref.Name})
		eps, err := a.cfg.Env.Objects(endpointSlicesGVR).List(ctx, ref.Namespace, sel, nil)
		switch {
		case err != nil:
			return cond(apiregv1.ConditionUnknown, "EndpointsAccessError", fmt.Sprintf("service/%s in %q cannot be checked due to: %v", ref.Name, ref.Namespace, err))
		case len(eps) == 0:
			return cond(apiregv1.ConditionFalse, "EndpointsNotFound", fmt.Sprintf("cannot find endpointslices for service/%s in %q", ref.Name, ref.Namespace))
		case !hasReadyEndpoint(portName, eps):
			return cond(apiregv1.ConditionFalse, "MissingEndpoints", fmt.Sprintf("endpointslices for service/%s in %q have no addresses with port name %q", ref.Name, ref.Namespace, portName))
		}
	}
	if b.rtErr != nil {
		return apiregv1.APIServiceCondition{}, false
	}
	if err := a.discoveryCheck(ctx, s, b); err != nil {
		return cond(apiregv1.ConditionFalse, "FailedDiscoveryCheck", err.Error())
	}
	return cond(apiregv1.ConditionTrue, "Passed", "all checks passed")
}

// hasReadyEndpoint reports whether a slice has a ready (or not known
// unready) endpoint and a port named portName.
func hasReadyEndpoint(portName string, objs []runtime.Object) bool {
	return slices.ContainsFunc(objs, func(o runtime.Object) bool {
		s := o.(*discoveryv1.EndpointSlice)
		return slices.ContainsFunc(s.Endpoints, func(e discoveryv1.Endpoint) bool {
			return e.Conditions.Ready == nil || *e.Conditions.Ready
		}) && slices.ContainsFunc(s.Ports, func(p discoveryv1.EndpointPort) bool {
			return p.Name != nil && *p.Name == portName && p.Port != nil
		})
	})
}

// discoveryCheck GETs the group-version's discovery document from the
// service, checkAttempts times at once; one 2xx or 3xx answer passes.
// The error is the last failure, worded as kube-aggregator's.
func (a *Aggregator) discoveryCheck(ctx context.Context, s *apiregv1.APIService, b *backend) error {
	client := &http.Client{Transport: b.rt.rt, Timeout: checkTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	results := make(chan error, checkAttempts)
	for range checkAttempts {
		go func() { results <- a.checkOnce(ctx, client, s) }()
	}
	var last error
	for range checkAttempts {
		if last = <-results; last == nil {
			return nil
		}
	}
	return last
}

func (a *Aggregator) checkOnce(ctx context.Context, client *http.Client, s *apiregv1.APIService) error {
	ref := s.Spec.Service
	host, err := a.cfg.Resolver.ResolveEndpoint(ctx, ref.Namespace, ref.Name, *ref.Port)
	if err != nil {
		return err
	}
	u := &url.URL{Scheme: "https", Host: host}
	u.Path = "/apis/" + s.Spec.Group + "/" + s.Spec.Version
	if s.Spec.Group == "" {
		u.Path = "/api/" + s.Spec.Version
	}
	errCh := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			errCh <- err
			return
		}
		setUserHeaders(req.Header, aggregatorUser)
		resp, err := client.Do(req)
		if resp != nil {
			resp.Body.Close()
			if resp.StatusCode < http.StatusOK || resp.StatusCode >= http.StatusMultipleChoices {
				errCh <- fmt.Errorf("bad status from %v: %d", u, resp.StatusCode)
				return
			}
		}
		errCh <- err
	}()
	select {
	case err := <-errCh:
		if err != nil {
			return fmt.Errorf("failing or missing response from %v: %w", u, err)
		}
		return nil
	case <-time.After(checkGiveUp):
		return fmt.Errorf("timed out waiting for %v", u)
	case <-ctx.Done():
		return errors.Join(fmt.Errorf("timed out waiting for %v", u), ctx.Err())
	}
}

// writeCondition stores cond as the APIService's Available condition
// when that changes its status (the transition time moves only when the
// condition's status does).
func (a *Aggregator) writeCondition(ctx context.Context, s *apiregv1.APIService, cond apiregv1.APIServiceCondition) error {
	want := s.DeepCopy()
	helper.SetAPIServiceCondition(want, cond)
	if equality.Semantic.DeepEqual(s.Status, want.Status) {
		return nil
	}
	_, err := a.cfg.Env.Objects(apiServicesGVR).Mutate(ctx, "", s.Name, func(obj runtime.Object) error {
		cur := obj.(*apiregv1.APIService)
		if cur.UID != s.UID {
			return apierrors.NewConflict(apiregv1.Resource("apiservices"), s.Name, errors.New("the object was replaced"))
		}
		helper.SetAPIServiceCondition(cur, cond)
		return nil
	}, false)
	if err != nil {
		return fmt.Errorf("status of APIService %s: %w", s.Name, err)
	}
	if old := helper.GetAPIServiceConditionByType(s, apiregv1.Available); old == nil || old.Status != cond.Status {
		a.cfg.Logger.Info("changing APIService availability", "name", s.Name, "status", cond.Status, "reason", cond.Reason, "message", cond.Message)
	}
	return nil
}
