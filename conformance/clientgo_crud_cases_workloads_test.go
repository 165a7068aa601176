package conformance

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func workloadCases() []crudCase {
	one := int32(1)
	selector := func(app string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	}
	return []crudCase{
		{
			gvr: appsv1.SchemeGroupVersion.WithResource("deployments"), kind: "Deployment", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &appsv1.Deployment{ObjectMeta: crudMeta(n, l, true), Spec: appsv1.DeploymentSpec{
					Replicas: &one, Selector: selector(n), Template: crudTemplate(n),
				}}
			},
			setStatus: func(o runtime.Object) {
				o.(*appsv1.Deployment).Status.Replicas, o.(*appsv1.Deployment).Status.UpdatedReplicas = 1, 1
			},
			statusSet:    func(o runtime.Object) bool { return o.(*appsv1.Deployment).Status.UpdatedReplicas == 1 },
			subresources: []string{"scale"},
		},
		{
			gvr: appsv1.SchemeGroupVersion.WithResource("replicasets"), kind: "ReplicaSet", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &appsv1.ReplicaSet{ObjectMeta: crudMeta(n, l, true), Spec: appsv1.ReplicaSetSpec{
					Replicas: &one, Selector: selector(n), Template: crudTemplate(n),
				}}
			},
			setStatus: func(o runtime.Object) {
				o.(*appsv1.ReplicaSet).Status.Replicas, o.(*appsv1.ReplicaSet).Status.FullyLabeledReplicas = 1, 1
			},
			statusSet:         func(o runtime.Object) bool { return o.(*appsv1.ReplicaSet).Status.FullyLabeledReplicas == 1 },
			subresources:      []string{"scale"},
			statusKeepsLabels: true,
		},
		{
			gvr: appsv1.SchemeGroupVersion.WithResource("statefulsets"), kind: "StatefulSet", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &appsv1.StatefulSet{ObjectMeta: crudMeta(n, l, true), Spec: appsv1.StatefulSetSpec{
					Replicas: &one, Selector: selector(n), Template: crudTemplate(n),
				}}
			},
			setStatus: func(o runtime.Object) {
				o.(*appsv1.StatefulSet).Status.Replicas, o.(*appsv1.StatefulSet).Status.CurrentReplicas = 1, 1
			},
			statusSet:         func(o runtime.Object) bool { return o.(*appsv1.StatefulSet).Status.CurrentReplicas == 1 },
			subresources:      []string{"scale"},
			statusKeepsLabels: true,
		},
		{
			gvr: appsv1.SchemeGroupVersion.WithResource("daemonsets"), kind: "DaemonSet", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &appsv1.DaemonSet{ObjectMeta: crudMeta(n, l, true), Spec: appsv1.DaemonSetSpec{
					Selector: selector(n), Template: crudTemplate(n),
				}}
			},
			setStatus:         func(o runtime.Object) { o.(*appsv1.DaemonSet).Status.DesiredNumberScheduled = 2 },
			statusSet:         func(o runtime.Object) bool { return o.(*appsv1.DaemonSet).Status.DesiredNumberScheduled == 2 },
			statusKeepsLabels: true,
		},
		{
			gvr: appsv1.SchemeGroupVersion.WithResource("controllerrevisions"), kind: "ControllerRevision", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &appsv1.ControllerRevision{ObjectMeta: crudMeta(n, l, true), Revision: 1,
					Data: runtime.RawExtension{Raw: []byte(`{"spec":{"template":{}}}`)}}
			},
		},
		{
			gvr: batchv1.SchemeGroupVersion.WithResource("jobs"), kind: "Job", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				managedBy := "example.com/nobody"
				return &batchv1.Job{ObjectMeta: crudMeta(n, l, true), Spec: batchv1.JobSpec{ManagedBy: &managedBy,
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: crudPodSpec.Containers}}}}
			},
			setStatus: func(o runtime.Object) {
				o.(*batchv1.Job).Status.Active = 1
				o.(*batchv1.Job).Status.StartTime = new(metav1.Now())
			},
			statusSet:         func(o runtime.Object) bool { return o.(*batchv1.Job).Status.Active == 1 },
			statusKeepsLabels: true,
			orphansByDefault:  true,
		},
		{
			gvr: batchv1.SchemeGroupVersion.WithResource("cronjobs"), kind: "CronJob", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				suspend := true
				return &batchv1.CronJob{ObjectMeta: crudMeta(n, l, true), Spec: batchv1.CronJobSpec{Schedule: "@hourly", Suspend: &suspend,
					JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
						Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure, Containers: crudPodSpec.Containers}}}}}}
			},
			setStatus:         func(o runtime.Object) { o.(*batchv1.CronJob).Status.LastScheduleTime = new(metav1.Now()) },
			statusSet:         func(o runtime.Object) bool { return o.(*batchv1.CronJob).Status.LastScheduleTime != nil },
			statusKeepsLabels: true,
		},
		{
			gvr: autoscalingv2.SchemeGroupVersion.WithResource("horizontalpodautoscalers"), kind: "HorizontalPodAutoscaler", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: crudMeta(n, l, true), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
					ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: n}, MaxReplicas: 3}}
			},
			setStatus: func(o runtime.Object) { o.(*autoscalingv2.HorizontalPodAutoscaler).Status.DesiredReplicas = 2 },
			statusSet: func(o runtime.Object) bool {
				return o.(*autoscalingv2.HorizontalPodAutoscaler).Status.DesiredReplicas == 2
			},
			statusKeepsLabels: true,
		},
		{
			gvr: autoscalingv1.SchemeGroupVersion.WithResource("horizontalpodautoscalers"), kind: "HorizontalPodAutoscaler", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: crudMeta(n, l, true), Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
					ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: n}, MaxReplicas: 3}}
			},
			setStatus: func(o runtime.Object) { o.(*autoscalingv1.HorizontalPodAutoscaler).Status.DesiredReplicas = 2 },
			statusSet: func(o runtime.Object) bool {
				return o.(*autoscalingv1.HorizontalPodAutoscaler).Status.DesiredReplicas == 2
			},
			statusKeepsLabels: true,
		},
		{
			gvr: policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"), kind: "PodDisruptionBudget", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				minAvailable := intstr.FromInt32(1)
				return &policyv1.PodDisruptionBudget{ObjectMeta: crudMeta(n, l, true), Spec: policyv1.PodDisruptionBudgetSpec{
					MinAvailable: &minAvailable, Selector: selector(n)}}
			},
			setStatus:         func(o runtime.Object) { o.(*policyv1.PodDisruptionBudget).Status.ExpectedPods = 2 },
			statusSet:         func(o runtime.Object) bool { return o.(*policyv1.PodDisruptionBudget).Status.ExpectedPods == 2 },
			statusKeepsLabels: true,
		},
		{
			gvr: coordinationv1.SchemeGroupVersion.WithResource("leases"), kind: "Lease", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				holder := "someone"
				return &coordinationv1.Lease{ObjectMeta: crudMeta(n, l, true), Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
			},
		},
		{
			gvr: schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"), kind: "PriorityClass",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &schedulingv1.PriorityClass{ObjectMeta: crudMeta(n, l, false), Value: 1000, Description: "a row of the CRUD tests"}
			},
		},
		{
			gvr: nodev1.SchemeGroupVersion.WithResource("runtimeclasses"), kind: "RuntimeClass",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &nodev1.RuntimeClass{ObjectMeta: crudMeta(n, l, false), Handler: "cg-handler"}
			},
		},
	}
}
