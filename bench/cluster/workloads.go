package main

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

const (
	namespace = "default"
	benchName = "bench"
)

// workload is one thing applied to a fresh cluster of nodes nodes. run
// creates it and returns once a watch sees it done; when ctx ends first it
// returns errNotFinished wrapped with its progress.
type workload struct {
	name  string
	nodes int
	what  string
	run   func(ctx context.Context, cs kubernetes.Interface) error
}

var errNotFinished = errors.New("did not finish")

var benchLabels = map[string]string{"app": benchName}

// podTemplate is every workload's pod: one container requesting 10m CPU
// and 16Mi (so 10,000 fit on 100 nodes of 32 CPUs and 110 pods).
func podTemplate(restart corev1.RestartPolicy) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: benchLabels},
		Spec: corev1.PodSpec{
			RestartPolicy: restart,
			Containers: []corev1.Container{{
				Name: "app", Image: "nginx:1.25",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi"),
				}},
			}},
		},
	}
}

// deploymentWorkload: replicas pods to all Running and Ready, as a pod
// watch (started before the create) sees them.
func deploymentWorkload(replicas, nodes int) workload {
	return workload{name: "deployment", nodes: nodes,
		what: fmt.Sprintf("%d-replica Deployment on %d nodes to all pods Running", replicas, nodes),
		run: func(ctx context.Context, cs kubernetes.Interface) error {
			pods := cs.CoreV1().Pods(namespace)
			list, err := pods.List(ctx, metav1.ListOptions{Limit: 1})
			if err != nil {
				return err
			}
			n := int32(replicas)
			d := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: benchName},
				Spec: appsv1.DeploymentSpec{
					Replicas: &n,
					Selector: &metav1.LabelSelector{MatchLabels: benchLabels},
					Template: podTemplate(corev1.RestartPolicyAlways),
				},
			}
			if _, err := cs.AppsV1().Deployments(namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
				return err
			}
			seen, running := map[string]bool{}, map[string]bool{}
			lw := &cache.ListWatch{WatchFunc: func(o metav1.ListOptions) (watch.Interface, error) { return pods.Watch(ctx, o) }}
			return until(ctx, list.ResourceVersion, lw, func() string {
				return fmt.Sprintf("%d pods seen, %d Running and Ready", len(seen), len(running))
			}, func(ev watch.Event) (bool, error) {
				pod, ok := ev.Object.(*corev1.Pod)
				if !ok {
					return false, nil
				}
				if ev.Type == watch.Deleted {
					delete(seen, pod.Name)
					delete(running, pod.Name)
					return false, nil
				}
				seen[pod.Name] = true
				if pod.Status.Phase == corev1.PodRunning && podReady(pod) && pod.DeletionTimestamp == nil {
					running[pod.Name] = true
				} else {
					delete(running, pod.Name)
				}
				return len(running) >= replicas, nil
			})
		}}
}

// jobWorkload: completions pods, parallelism at a time, to the Job's
// Complete condition.
func jobWorkload(completions, parallelism, nodes int) workload {
	return workload{name: "job", nodes: nodes,
		what: fmt.Sprintf("%d-completion Job, parallelism %d, on %d nodes to Complete", completions, parallelism, nodes),
		run: func(ctx context.Context, cs kubernetes.Interface) error {
			c, p := int32(completions), int32(parallelism)
			backoff := int32(6)
			job := &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Name: benchName},
				Spec: batchv1.JobSpec{
					Completions: &c, Parallelism: &p, BackoffLimit: &backoff,
					Template: podTemplate(corev1.RestartPolicyNever),
				},
			}
			job.Spec.Template.Spec.Containers[0].Image = "busybox:1.36"
			job.Spec.Template.Spec.Containers[0].Command = []string{"true"}
			jobs := cs.BatchV1().Jobs(namespace)
			created, err := jobs.Create(ctx, job, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			var last batchv1.JobStatus
			return until(ctx, created.ResourceVersion, named(func(o metav1.ListOptions) (watch.Interface, error) { return jobs.Watch(ctx, o) }),
				func() string {
					return fmt.Sprintf("succeeded %d, active %d, failed %d", last.Succeeded, last.Active, last.Failed)
				}, func(ev watch.Event) (bool, error) {
					j, ok := ev.Object.(*batchv1.Job)
					if !ok {
						return false, nil
					}
					last = j.Status
					for _, cond := range j.Status.Conditions {
						if cond.Status != corev1.ConditionTrue {
							continue
						}
						switch cond.Type {
						case batchv1.JobComplete:
							return true, nil
						case batchv1.JobFailed:
							return false, fmt.Errorf("job failed: %s: %s", cond.Reason, cond.Message)
						}
					}
					return false, nil
				})
		}}
}

// statefulSetWorkload: a Parallel StatefulSet (with its headless Service)
// to status.readyReplicas == replicas.
func statefulSetWorkload(replicas, nodes int) workload {
	return workload{name: "statefulset", nodes: nodes,
		what: fmt.Sprintf("%d-replica StatefulSet (Parallel) on %d nodes to all ready", replicas, nodes),
		run: func(ctx context.Context, cs kubernetes.Interface) error {
			svc := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: benchName},
				Spec: corev1.ServiceSpec{
					ClusterIP: corev1.ClusterIPNone, Selector: benchLabels,
					Ports: []corev1.ServicePort{{Name: "web", Port: 80}},
				},
			}
			if _, err := cs.CoreV1().Services(namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
				return err
			}
			n := int32(replicas)
			sts := &appsv1.StatefulSet{
				ObjectMeta: metav1.ObjectMeta{Name: benchName},
				Spec: appsv1.StatefulSetSpec{
					Replicas: &n, ServiceName: benchName,
					PodManagementPolicy: appsv1.ParallelPodManagement,
					Selector:            &metav1.LabelSelector{MatchLabels: benchLabels},
					Template:            podTemplate(corev1.RestartPolicyAlways),
				},
			}
			sets := cs.AppsV1().StatefulSets(namespace)
			created, err := sets.Create(ctx, sts, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			var last appsv1.StatefulSetStatus
			return until(ctx, created.ResourceVersion, named(func(o metav1.ListOptions) (watch.Interface, error) { return sets.Watch(ctx, o) }),
				func() string {
					return fmt.Sprintf("replicas %d, ready %d", last.Replicas, last.ReadyReplicas)
				}, func(ev watch.Event) (bool, error) {
					s, ok := ev.Object.(*appsv1.StatefulSet)
					if !ok {
						return false, nil
					}
					last = s.Status
					return s.Status.ReadyReplicas >= n, nil
				})
		}}
}

// daemonSetWorkload: a DaemonSet to status.numberReady == nodes.
func daemonSetWorkload(nodes int) workload {
	return workload{name: "daemonset", nodes: nodes,
		what: fmt.Sprintf("DaemonSet on %d nodes to numberReady %d", nodes, nodes),
		run: func(ctx context.Context, cs kubernetes.Interface) error {
			ds := &appsv1.DaemonSet{
				ObjectMeta: metav1.ObjectMeta{Name: benchName},
				Spec: appsv1.DaemonSetSpec{
					Selector: &metav1.LabelSelector{MatchLabels: benchLabels},
					Template: podTemplate(corev1.RestartPolicyAlways),
				},
			}
			sets := cs.AppsV1().DaemonSets(namespace)
			created, err := sets.Create(ctx, ds, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			var last appsv1.DaemonSetStatus
			return until(ctx, created.ResourceVersion, named(func(o metav1.ListOptions) (watch.Interface, error) { return sets.Watch(ctx, o) }),
				func() string {
					return fmt.Sprintf("desired %d, scheduled %d, ready %d", last.DesiredNumberScheduled, last.CurrentNumberScheduled, last.NumberReady)
				}, func(ev watch.Event) (bool, error) {
					s, ok := ev.Object.(*appsv1.DaemonSet)
					if !ok {
						return false, nil
					}
					last = s.Status
					return int(s.Status.NumberReady) >= nodes && int(s.Status.DesiredNumberScheduled) == nodes, nil
				})
		}}
}

// named watches the object called benchName only.
func named(w func(metav1.ListOptions) (watch.Interface, error)) cache.Watcher {
	return &cache.ListWatch{WatchFunc: func(o metav1.ListOptions) (watch.Interface, error) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", benchName).String()
		return w(o)
	}}
}

// until follows a watch from rv (re-established if the server closes it)
// until done returns true, done fails, or ctx ends: then it returns
// errNotFinished with progress().
func until(ctx context.Context, rv string, w cache.Watcher, progress func() string, done func(watch.Event) (bool, error)) error {
	_, err := watchtools.Until(ctx, rv, w, func(ev watch.Event) (bool, error) {
		if ev.Type == watch.Error {
			return false, fmt.Errorf("watch error: %v", apiStatus(ev.Object))
		}
		return done(ev)
	})
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("%w: %s", errNotFinished, progress())
	}
	return err
}

func apiStatus(o runtime.Object) string {
	if s, ok := o.(*metav1.Status); ok {
		return s.Message
	}
	return fmt.Sprintf("%T", o)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
