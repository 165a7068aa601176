package defaulttolerationseconds

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/internal/admission"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// PluginName is the plugin's name in kube-apiserver.
const PluginName = "DefaultTolerationSeconds"

// Seconds is the default of kube-apiserver's
// --default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds.
const Seconds int64 = 300

// Plugin is DefaultTolerationSeconds (mutating).
type Plugin struct {
	notReady, unreachable int64
}

// New returns the plugin adding tolerations of notReady and unreachable
// seconds (kube-apiserver's --default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds); 0 or less means Seconds.
func New(notReady, unreachable int64) Plugin {
	if notReady <= 0 {
		notReady = Seconds
	}
	if unreachable <= 0 {
		unreachable = Seconds
	}
	return Plugin{notReady: notReady, unreachable: unreachable}
}

// Name implements admission.Plugin.
func (Plugin) Name() string { return PluginName }

// Admit adds the not-ready and unreachable tolerations a pod lacks.
func (pl Plugin) Admit(_ context.Context, _ registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	p, ok := a.Object.(*corev1.Pod)
	if !ok || !admission.Is(a, "", "pods") || (a.Operation != registry.Create && a.Operation != registry.Update) {
		return nil, nil
	}
	notReady, unreachable := false, false
	for _, t := range p.Spec.Tolerations {
		noExecute := t.Effect == corev1.TaintEffectNoExecute || t.Effect == ""
		if noExecute && (t.Key == corev1.TaintNodeNotReady || t.Key == "") {
			notReady = true
		}
		if noExecute && (t.Key == corev1.TaintNodeUnreachable || t.Key == "") {
			unreachable = true
		}
	}
	if !notReady {
		p.Spec.Tolerations = append(p.Spec.Tolerations, toleration(corev1.TaintNodeNotReady, pl.notReady))
	}
	if !unreachable {
		p.Spec.Tolerations = append(p.Spec.Tolerations, toleration(corev1.TaintNodeUnreachable, pl.unreachable))
	}
	return nil, nil
}

func toleration(key string, s int64) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &s}
}
