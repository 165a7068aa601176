package podautoscaler_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/internal/webhookclient/webhooktest"
)

// A Deployment is scaled up when its pods' cpu rises above the target
// (limited to max(2×current, 4) per sync and to maxReplicas), and down
// only after the 5-minute stabilization window, with kube's conditions,
// status and events.
func TestScaleUpAndDownOnCPU(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createDeployment("web", 1, "10m")
	h.createHPA("web", "web", 1, 4, cpuTarget(50), nil)

	h.stepUntil("a first sync", 10, func() error {
		a := h.hpa("web")
		if len(a.Status.CurrentMetrics) != 1 || a.Status.CurrentMetrics[0].Resource == nil ||
			a.Status.CurrentMetrics[0].Resource.Current.AverageUtilization == nil {
			return fmt.Errorf("status %+v", a.Status)
		}
		if u := *a.Status.CurrentMetrics[0].Resource.Current.AverageUtilization; u != 10 {
			return fmt.Errorf("utilization %d", u)
		}
		return h.wantCondition("web", autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound",
			"the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)")()
	})
	a := h.hpa("web")
	if a.Status.CurrentReplicas != 1 || a.Status.DesiredReplicas != 1 || a.Status.LastScaleTime != nil ||
		a.Status.ObservedGeneration == nil || *a.Status.ObservedGeneration != a.Generation {
		t.Errorf("status before any load: %+v", a.Status)
	}
	if v := a.Status.CurrentMetrics[0].Resource.Current.AverageValue; v == nil || v.String() != "10m" {
		t.Errorf("average value %v", v)
	}
	if err := h.wantCondition("web", autoscalingv2.ScalingLimited, corev1.ConditionFalse, "DesiredWithinRange",
		"the desired count is within the acceptable range")(); err != nil {
		t.Error(err)
	}

	// 500 % of the request: desired 10, limited to 4 (the scale-up limit).
	h.setUsage("web", "500m")
	took := h.stepUntil("scale up", 20, h.wantReplicas("web", 4))
	h.wantEvent("web", "SuccessfulRescale", "New size: 4; reason: cpu resource utilization (percentage of request) above target")
	// The status is written after the scale and the event.
	h.Eventually("status after the scale-up", func() error {
		if a := h.hpa("web"); a.Status.LastScaleTime == nil || a.Status.DesiredReplicas != 4 {
			return fmt.Errorf("status %+v", a.Status)
		}
		return nil
	})
	t.Logf("scaled up after %s of simulated time", took)
	h.waitRunning("web", 4)
	h.stepUntil("limited by maxReplicas", 10, h.wantCondition("web", autoscalingv2.ScalingLimited, corev1.ConditionTrue,
		"TooManyReplicas", "the desired replica count is more than the maximum replica count"))

	// Load gone: the recommendation drops, the window holds the size.
	h.setUsage("web", "10m")
	h.stepUntil("stabilized", 10, h.wantCondition("web", autoscalingv2.AbleToScale, corev1.ConditionTrue, "ScaleDownStabilized",
		"recent recommendations were higher than current one, applying the highest recent recommendation"))
	if got := h.replicas("web"); got != 4 {
		t.Fatalf("scaled down within the stabilization window: %d", got)
	}
	start := h.clk.Now()
	h.stepUntil("scale down", 40, h.wantReplicas("web", 1))
	if waited := h.clk.Now().Sub(start); waited < 4*time.Minute {
		t.Errorf("scaled down %s after the load fell, before the 5-minute window", waited)
	}
	h.wantEvent("web", "SuccessfulRescale", "New size: 1; reason: All metrics below target")
	h.waitRunning("web", 1)
}

// The behavior's policies pace the changes: one pod per minute up and
// down, no stabilization.
func TestBehaviorPolicies(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createDeployment("api", 1, "10m")
	zero := int32(0)
	perMinute := []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}}
	h.createHPA("api", "api", 1, 3, cpuTarget(50), &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp:   &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &zero, Policies: perMinute},
		ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &zero, Policies: perMinute},
	})
	h.stepUntil("a first sync", 10, h.wantCondition("api", autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", ""))

	// The policy's minute runs from the rescale, which the test may see a
	// step later than it happened (the clock can be stepped while the
	// scale write is in flight): it counts from the time the controller
	// recorded, lastScaleTime, awaited before the clock moves on.
	scaledAt := func(replicas int32, seen time.Time) time.Time {
		t.Helper()
		var at time.Time
		h.Eventually(fmt.Sprintf("the status of the rescale to %d", replicas), func() error {
			a := h.hpa("api")
			if a.Status.DesiredReplicas != replicas || a.Status.LastScaleTime == nil {
				return fmt.Errorf("status %+v", a.Status)
			}
			at = a.Status.LastScaleTime.Time
			return nil
		})
		if at.After(seen) || at.Before(seen.Add(-15*time.Second)) {
			t.Fatalf("lastScaleTime %s of the rescale to %d seen at %s: not within the step that showed it", at, replicas, seen)
		}
		return at
	}

	h.setUsage("api", "1")
	h.stepUntil("one more pod", 10, h.wantReplicas("api", 2))
	first := scaledAt(2, h.clk.Now())
	h.stepUntil("limited by the rate", 3, h.wantCondition("api", autoscalingv2.ScalingLimited, corev1.ConditionTrue, "ScaleUpLimit",
		"the desired replica count is increasing faster than the maximum scale rate"))
	h.stepUntil("a third pod", 10, h.wantReplicas("api", 3))
	if d := h.clk.Now().Sub(first); d < time.Minute {
		t.Errorf("second scale-up %s after the first, within the policy's minute", d)
	}
	h.waitRunning("api", 3)

	// Past the scale-ups' period (kube counts recent scale-ups in the
	// scale-down period's starting size), the load goes.
	h.step(90 * time.Second)
	h.setUsage("api", "1m")
	h.stepUntil("one pod less", 10, h.wantReplicas("api", 2))
	first = scaledAt(2, h.clk.Now())
	h.stepUntil("down to one", 10, h.wantReplicas("api", 1))
	if d := h.clk.Now().Sub(first); d < time.Minute {
		t.Errorf("second scale-down %s after the first, within the policy's minute", d)
	}
	h.wantEvent("api", "SuccessfulRescale", "New size: 2; reason: All metrics below target")
}

// The behavior's periods run from a rescale's write, not from the start
// of the sync that decided it: when the write takes 45 s of the clock (a
// webhook steps it while admitting the first scale-up), lastScaleTime is
// no earlier than the admission and the next scale-up comes a whole
// period after it.
func TestBehaviorPeriodFromTheWrite(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createDeployment("slow", 1, "10m")
	var probed atomic.Bool
	var admitted atomic.Pointer[time.Time]
	hook := webhooktest.Start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		req := review.Request
		switch {
		case req.DryRun != nil && *req.DryRun:
			probed.Store(true)
		case replicasOf(req.OldObject.Raw) == 1 && replicasOf(req.Object.Raw) == 2 && admitted.Load() == nil:
			h.clk.Step(45 * time.Second)
			now := h.clk.Now()
			admitted.Store(&now)
		}
		review.Response = &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
		review.Request = nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	}))
	// The controller's scale write reaches admission as kube-apiserver
	// sends it: an update of deployments/scale, with Scale objects.
	ca, _ := json.Marshal(hook.CABundle)
	config := fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"slow-scale"},
"webhooks":[{"name":"slow-scale.example.com","clientConfig":{"url":%q,"caBundle":%s},
 "rules":[{"operations":["UPDATE"],"apiGroups":["apps"],"apiVersions":["v1"],"resources":["deployments/scale"]}],
 "sideEffects":"None","admissionReviewVersions":["v1"]}]}`, hook.URL, ca)
	if code, out, _ := h.Server.Do(t, http.MethodPost, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", "application/json", strings.NewReader(config)); code != http.StatusCreated {
		t.Fatalf("webhook configuration: %d %s", code, out)
	}
	// The server reads configurations from its watch cache: a dry-run
	// scale write reaches the webhook once it is in force.
	scale := `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"slow","namespace":"default"},"spec":{"replicas":1}}`
	h.Eventually("the webhook in force", func() error {
		code, out, _ := h.Server.Do(t, http.MethodPut, "/apis/apps/v1/namespaces/default/deployments/slow/scale?dryRun=All", "application/json", strings.NewReader(scale))
		if code != http.StatusOK || !probed.Load() {
			return fmt.Errorf("dry-run scale: %d %s", code, out)
		}
		return nil
	})

	perMinute := []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}}
	h.createHPA("slow", "slow", 1, 3, cpuTarget(50), &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp: &autoscalingv2.HPAScalingRules{Policies: perMinute}})
	h.stepUntil("a first sync", 10, h.wantCondition("slow", autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", ""))
	h.setUsage("slow", "1")
	h.stepUntil("one more pod", 10, h.wantReplicas("slow", 2))
	at := admitted.Load()
	if at == nil {
		t.Fatal("the scale-up was not admitted by the webhook")
	}
	var scaled time.Time
	h.Eventually("lastScaleTime of the scale-up", func() error {
		a := h.hpa("slow")
		if a.Status.LastScaleTime == nil {
			return fmt.Errorf("status %+v", a.Status)
		}
		scaled = a.Status.LastScaleTime.Time
		return nil
	})
	if scaled.Before(*at) {
		t.Errorf("lastScaleTime %s, before the write was admitted at %s", scaled, *at)
	}
	h.stepUntil("a third pod", 10, h.wantReplicas("slow", 3))
	if d := h.clk.Now().Sub(*at); d < time.Minute {
		t.Errorf("second scale-up %s after the first's write, within the policy's minute", d)
	}
}

// replicasOf is spec.replicas of an admitted Scale, -1 without one.
func replicasOf(raw []byte) int32 {
	var o struct {
		Spec struct {
			Replicas *int32 `json:"replicas"`
		} `json:"spec"`
	}
	if json.Unmarshal(raw, &o) != nil || o.Spec.Replicas == nil {
		return -1
	}
	return *o.Spec.Replicas
}

// Metrics that need an adapter fail as kube-controller-manager reports
// them; a target that does not exist cannot be scaled.
func TestUnsupportedMetricsAndMissingTarget(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createDeployment("q", 1, "10m")
	avg := resourceQuantity("10")
	h.createHPA("q", "q", 1, 3, []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "requests_per_second"},
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &avg}}}}, nil)
	msg := "unable to get metric requests_per_second: unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered"
	h.stepUntil("pods metric refused", 10, h.wantCondition("q", autoscalingv2.ScalingActive, corev1.ConditionFalse, "FailedGetPodsMetric",
		"the HPA was unable to compute the replica count: "+msg))
	h.wantEvent("q", "FailedGetPodsMetric", msg)
	h.wantEvent("q", "FailedComputeMetricsReplicas", "invalid metrics (1 invalid out of 1), first error is: failed to get pods metric value: "+msg)
	if a := h.hpa("q"); a.Status.CurrentReplicas != 1 || len(a.Status.CurrentMetrics) != 1 || a.Status.CurrentMetrics[0].Type != "" {
		t.Errorf("status with a failed metric: %+v", a.Status)
	}

	// Object and External metrics: on a second target (one autoscaler per
	// pods).
	h.createDeployment("x", 1, "10m")
	val := resourceQuantity("5")
	h.createHPA("x", "x", 1, 3, []autoscalingv2.MetricSpec{
		{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "main"},
			Metric:          autoscalingv2.MetricIdentifier{Name: "hits"},
			Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: &val}}},
		{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: "queue_depth"},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &val}}},
	}, nil)
	objMsg := "unable to get metric hits on Ingress default/main: unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered"
	h.stepUntil("object metric refused", 10, h.wantCondition("x", autoscalingv2.ScalingActive, corev1.ConditionFalse, "FailedGetObjectMetric",
		"the HPA was unable to compute the replica count: "+objMsg))
	h.wantEvent("x", "FailedGetObjectMetric", objMsg)
	h.wantEvent("x", "FailedGetExternalMetric", "unable to get external metric default/queue_depth/nil: unable to fetch metrics from external metrics API: "+
		"the server could not find the requested resource (get queue_depth.external.metrics.k8s.io)")
	h.wantEvent("x", "FailedComputeMetricsReplicas", "invalid metrics (2 invalid out of 2), first error is: failed to get object metric value: "+objMsg)

	h.createHPA("ghost", "nope", 1, 3, cpuTarget(50), nil)
	h.stepUntil("missing target", 10, h.wantCondition("ghost", autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale",
		`the HPA controller was unable to get the target's current scale: deployments.apps "nope" not found`))
	h.wantEvent("ghost", "FailedGetScale", `deployments.apps "nope" not found`)

	// An autoscaling/v1 autoscaler is the same object: synced, its status
	// read through v1.
	h.createDeployment("v", 1, "30m")
	body := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"v"},
"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"v"},"minReplicas":1,"maxReplicas":3,"targetCPUUtilizationPercentage":60}}`
	if code, out, _ := h.Server.Do(t, http.MethodPost, "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers", "application/json", strings.NewReader(body)); code != http.StatusCreated {
		t.Fatalf("create v1: %d %s", code, out)
	}
	h.stepUntil("v1 status", 10, func() error {
		var v1 autoscalingv1.HorizontalPodAutoscaler
		code, out, _ := h.Server.Do(t, http.MethodGet, "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/v", "", nil)
		if err := json.Unmarshal(out, &v1); err != nil || code != 200 {
			return fmt.Errorf("%d %s", code, out)
		}
		if u := v1.Status.CurrentCPUUtilizationPercentage; u == nil || *u != 30 || v1.Status.CurrentReplicas != 1 {
			return fmt.Errorf("v1 status %+v", v1.Status)
		}
		return nil
	})
	// A second autoscaler of the same pods is refused.
	h.createHPA("dup", "v", 1, 3, cpuTarget(50), nil)
	h.stepUntil("ambiguous", 10, h.wantCondition("dup", autoscalingv2.ScalingActive, corev1.ConditionFalse, "AmbiguousSelector",
		"pods by selector app=v are controlled by more than one HPA (e.g. [default/dup default/v])"))
}
