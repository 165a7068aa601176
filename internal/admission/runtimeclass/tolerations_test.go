package runtimeclass

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestMergeTolerations(t *testing.T) {
	s := func(v int64) *int64 { return &v }
	exists := func(key string, eff corev1.TaintEffect, secs *int64) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: eff, TolerationSeconds: secs}
	}
	equal := corev1.Toleration{Key: "k", Operator: corev1.TolerationOpEqual, Value: "v", Effect: corev1.TaintEffectNoSchedule}
	for _, tc := range []struct {
		name          string
		first, second []corev1.Toleration
		want          []corev1.Toleration
	}{
		{"disjoint", []corev1.Toleration{exists("a", "", nil)}, []corev1.Toleration{exists("b", "", nil)},
			[]corev1.Toleration{exists("a", "", nil), exists("b", "", nil)}},
		{"duplicate keeps the first", []corev1.Toleration{equal}, []corev1.Toleration{equal}, []corev1.Toleration{equal}},
		{"any effect covers one", []corev1.Toleration{exists("k", corev1.TaintEffectNoSchedule, nil)}, []corev1.Toleration{exists("k", "", nil)},
			[]corev1.Toleration{exists("k", "", nil)}},
		{"exists covers equal", []corev1.Toleration{equal}, []corev1.Toleration{exists("k", corev1.TaintEffectNoSchedule, nil)},
			[]corev1.Toleration{exists("k", corev1.TaintEffectNoSchedule, nil)}},
		{"longer NoExecute covers shorter", []corev1.Toleration{exists("k", corev1.TaintEffectNoExecute, s(300))},
			[]corev1.Toleration{exists("k", corev1.TaintEffectNoExecute, nil), exists("k", corev1.TaintEffectNoExecute, s(60))},
			[]corev1.Toleration{exists("k", corev1.TaintEffectNoExecute, nil)}},
		{"empty key exists covers all", []corev1.Toleration{exists("a", "", nil), equal}, []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			[]corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
	} {
		if got := MergeTolerations(tc.first, tc.second); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
