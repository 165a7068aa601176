package podautoscaler

import (
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// What the controller remembers of an autoscaler between syncs (in memory,
// as kube-controller-manager: a restart forgets it): its recent
// recommendations, for stabilization, and its recent scale events, for the
// behavior's rate policies.

// Kubernetes' limits without a behavior: at most double, or 4, per sync.
const (
	scaleUpLimitFactor  = 2.0
	scaleUpLimitMinimum = 4.0
)

type recommendation struct {
	replicas int32
	at       time.Time
}

type scaleEvent struct {
	change   int32
	at       time.Time
	outdated bool
}

// memory is one autoscaler's history.
type memory struct {
	recommendations []recommendation
	up, down        []scaleEvent
}

// limit is a normalization's result: the replicas, and the
// ScalingLimited reason and message.
type limit struct {
	replicas        int32
	reason, message string
}

// stabilize (no behavior) returns the highest recommendation of the
// downscale stabilization window, this one included, and records it.
func (m *memory) stabilize(desired int32, window time.Duration, now time.Time) int32 {
	out := desired
	cutoff := now.Add(-window)
	oldIdx := -1
	for i, r := range m.recommendations {
		if r.at.Before(cutoff) {
			oldIdx = i
		} else if r.replicas > out {
			out = r.replicas
		}
	}
	rec := recommendation{desired, now}
	if oldIdx >= 0 {
		m.recommendations[oldIdx] = rec
	} else {
		m.recommendations = append(m.recommendations, rec)
	}
	return out
}

// rulesLimit (no behavior) bounds desired between minReplicas and
// min(maxReplicas, max(2×current, 4)).
func rulesLimit(current, desired, minR, maxR int32) limit {
	upLimit := int32(math.Max(scaleUpLimitFactor*float64(current), scaleUpLimitMinimum))
	l := limit{reason: "TooManyReplicas", message: "the desired replica count is more than the maximum replica count"}
	maxAllowed := maxR
	if maxR > upLimit {
		maxAllowed = upLimit
		l = limit{reason: "ScaleUpLimit", message: "the desired replica count is increasing faster than the maximum scale rate"}
	}
	switch {
	case desired < minR:
		return limit{replicas: minR, reason: "TooFewReplicas", message: "the desired replica count is less than the minimum replica count"}
	case desired > maxAllowed:
		l.replicas = maxAllowed
		return l
	}
	return limit{replicas: desired, reason: "DesiredWithinRange", message: "the desired count is within the acceptable range"}
}

// stabilizeBehavior keeps the recommendation between the lowest of the
// scale-up window and the highest of the scale-down window (starting from
// current), records the unstabilized one, and words the AbleToScale
// condition of a stabilized result.
func (m *memory) stabilizeBehavior(b *autoscalingv2.HorizontalPodAutoscalerBehavior, current, desired int32, now time.Time) (int32, string, string) {
	upCutoff := now.Add(-time.Duration(*b.ScaleUp.StabilizationWindowSeconds) * time.Second)
	downCutoff := now.Add(-time.Duration(*b.ScaleDown.StabilizationWindowSeconds) * time.Second)
	up, down := desired, desired
	oldIdx := -1
	for i, r := range m.recommendations {
		if r.at.After(upCutoff) {
			up = min(up, r.replicas)
		}
		if r.at.After(downCutoff) {
			down = max(down, r.replicas)
		}
		if r.at.Before(upCutoff) && r.at.Before(downCutoff) {
			oldIdx = i
		}
	}
	out := current
	if out < up {
		out = up
	}
	if out > down {
		out = down
	}
	rec := recommendation{desired, now}
	if oldIdx >= 0 {
		m.recommendations[oldIdx] = rec
	} else {
		m.recommendations = append(m.recommendations, rec)
	}
	if desired >= current {
		return out, "ScaleUpStabilized", "recent recommendations were lower than current one, applying the lowest recent recommendation"
	}
	return out, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation"
}

// changeIn sums the events' changes within the last period seconds.
func changeIn(events []scaleEvent, periodSeconds int32, now time.Time) int32 {
	cutoff := now.Add(-time.Duration(periodSeconds) * time.Second)
	var sum int32
	for _, e := range events {
		if e.at.After(cutoff) {
			sum += e.change
		}
	}
	return sum
}

// scaleUpLimit is the most replicas the scale-up policies allow now.
func (m *memory) scaleUpLimit(current int32, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	sel := selectPolicy(rules)
	if sel == autoscalingv2.DisabledPolicySelect {
		return current
	}
	pick, result := maxI32, int32(math.MinInt32)
	if sel == autoscalingv2.MinChangePolicySelect {
		pick, result = minI32, math.MaxInt32
	}
	for _, p := range rules.Policies {
		start := current - changeIn(m.up, p.PeriodSeconds, now) + changeIn(m.down, p.PeriodSeconds, now)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start + p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		result = pick(result, proposed)
	}
	return result
}

// scaleDownLimit is the fewest replicas the scale-down policies allow now.
func (m *memory) scaleDownLimit(current int32, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	sel := selectPolicy(rules)
	if sel == autoscalingv2.DisabledPolicySelect {
		return current
	}
	pick, result := minI32, int32(math.MaxInt32)
	if sel == autoscalingv2.MinChangePolicySelect {
		pick, result = maxI32, math.MinInt32
	}
	for _, p := range rules.Policies {
		start := current - changeIn(m.up, p.PeriodSeconds, now) + changeIn(m.down, p.PeriodSeconds, now)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start - p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		result = pick(result, proposed)
	}
	return result
}

func selectPolicy(r *autoscalingv2.HPAScalingRules) autoscalingv2.ScalingPolicySelect {
	if r.SelectPolicy == nil {
		return autoscalingv2.MaxChangePolicySelect
	}
	return *r.SelectPolicy
}

func minI32(a, b int32) int32 { return min(a, b) }
func maxI32(a, b int32) int32 { return max(a, b) }

// behaviorLimit bounds desired by the rate policies and min/max replicas.
func (m *memory) behaviorLimit(b *autoscalingv2.HorizontalPodAutoscalerBehavior, current, desired, minR, maxR int32, now time.Time) limit {
	switch {
	case desired > current:
		upLimit := max(m.scaleUpLimit(current, b.ScaleUp, now), current)
		allowed, l := maxR, limit{reason: "TooManyReplicas", message: "the desired replica count is more than the maximum replica count"}
		if maxR > upLimit {
			allowed, l = upLimit, limit{reason: "ScaleUpLimit", message: "the desired replica count is increasing faster than the maximum scale rate"}
		}
		if desired > allowed {
			l.replicas = allowed
			return l
		}
	case desired < current:
		downLimit := min(m.scaleDownLimit(current, b.ScaleDown, now), current)
		allowed, l := minR, limit{reason: "TooFewReplicas", message: "the desired replica count is less than the minimum replica count"}
		if minR < downLimit {
			allowed, l = downLimit, limit{reason: "ScaleDownLimit", message: "the desired replica count is decreasing faster than the maximum scale rate"}
		}
		if desired < allowed {
			l.replicas = allowed
			return l
		}
	}
	return limit{replicas: desired, reason: "DesiredWithinRange", message: "the desired count is within the acceptable range"}
}

// storeScaleEvent records a rescale from prev to next for the rate
// policies, reusing an entry older than the longest policy period.
func (m *memory) storeScaleEvent(b *autoscalingv2.HorizontalPodAutoscalerBehavior, prev, next int32, now time.Time) {
	if b == nil {
		return
	}
	events, rules, change := &m.down, b.ScaleDown, prev-next
	if next > prev {
		events, rules, change = &m.up, b.ScaleUp, next-prev
	}
	var longest int32
	for _, p := range rules.Policies {
		longest = max(longest, p.PeriodSeconds)
	}
	cutoff := now.Add(-time.Duration(longest) * time.Second)
	oldIdx := -1
	for i := range *events {
		if (*events)[i].at.Before(cutoff) {
			(*events)[i].outdated = true
		}
		if (*events)[i].outdated {
			oldIdx = i
		}
	}
	ev := scaleEvent{change: change, at: now}
	if oldIdx >= 0 {
		(*events)[oldIdx] = ev
	} else {
		*events = append(*events, ev)
	}
}
