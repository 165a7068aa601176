package metrics

import (
	"context"
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// GroupName is the resource metrics API group.
const GroupName = "metrics.k8s.io"

var (
	nodesGVR = corev1.SchemeGroupVersion.WithResource("nodes")
	podsGVR  = corev1.SchemeGroupVersion.WithResource("pods")
	// The not-found errors name the resources as metrics-server does: an
	// object without metrics by its storage's resource, a node or pod that
	// does not exist as its informer's lister does.
	nodeMetricsGR = schema.GroupResource{Group: GroupName, Resource: "nodemetrics"}
	podMetricsGR  = schema.GroupResource{Group: GroupName, Resource: "podmetrics"}
	nodeListerGR  = schema.GroupResource{Resource: "node"}
	podListerGR   = schema.GroupResource{Resource: "pods"}
)

// scrapeParallelism bounds the nodes scraped at once by one request.
const scrapeParallelism = 16

// Resources returns the descriptors of metrics.k8s.io/v1beta1 nodes and
// pods, sharing one new Scraper.
func Resources() []*registry.Resource {
	s := NewScraper()
	return []*registry.Resource{
		{
			Group: GroupName, Version: "v1beta1", Resource: "nodes", Kind: "NodeMetrics", ListKind: "NodeMetricsList",
			Singular: "node", // as metrics-server names it
			New:      func() runtime.Object { return &metricsv1beta1.NodeMetrics{} },
			NewList:  func() runtime.Object { return &metricsv1beta1.NodeMetricsList{} },
			Virtual:  &registry.Virtual{Get: s.getNode, List: s.listNodes},
			Attrs:    strategy.Attrs[*metricsv1beta1.NodeMetrics](false, nil),
			Table:    usageTable{},
		},
		{
			Group: GroupName, Version: "v1beta1", Resource: "pods", Kind: "PodMetrics", ListKind: "PodMetricsList",
			Namespaced: true, // no singular name, as metrics-server serves it
			New:        func() runtime.Object { return &metricsv1beta1.PodMetrics{} },
			NewList:    func() runtime.Object { return &metricsv1beta1.PodMetricsList{} },
			Virtual:    &registry.Virtual{Get: s.getPod, List: s.listPods},
			Attrs:      strategy.Attrs[*metricsv1beta1.PodMetrics](true, nil),
			Table:      usageTable{},
		},
	}
}

// selectors parses a list request's selectors; field selectors may name
// metadata.name and metadata.namespace only.
func selectors(req registry.Request) (labels.Selector, fields.Selector, error) {
	ls, err := labels.Parse(req.Query.Get("labelSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	fs, err := fields.ParseSelector(req.Query.Get("fieldSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
	}
	for _, r := range fs.Requirements() {
		if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
			return nil, nil, apierrors.NewBadRequest(strategy.UnknownFieldLabel(r.Field))
		}
	}
	return ls, fs, nil
}

// scrapeAll scrapes the nodes (at most scrapeParallelism at once); a node
// that cannot be scraped has no entry, as metrics-server skips it.
func (s *Scraper) scrapeAll(ctx context.Context, env registry.Env, nodes []*corev1.Node) map[string]nodeUsage {
	out := make(map[string]nodeUsage, len(nodes))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, scrapeParallelism)
	for _, n := range nodes {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			u, err := s.Node(ctx, env, n)
			if err != nil {
				return
			}
			mu.Lock()
			out[n.Name] = u
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// quantities are a usage's cpu and memory as metrics-server reports them.
func quantities(nanoCores, mem int64) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewScaledQuantity(nanoCores, -9),
		corev1.ResourceMemory: *resource.NewQuantity(mem, resource.BinarySI),
	}
}

func (s *Scraper) getNode(ctx context.Context, env registry.Env, req registry.Request) (runtime.Object, error) {
	obj, err := env.Objects(nodesGVR).Get(ctx, "", req.Name)
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewNotFound(nodeListerGR, req.Name)
	}
	if err != nil {
		return nil, err
	}
	items := s.nodeMetrics(ctx, env, []*corev1.Node{obj.(*corev1.Node)})
	if len(items) == 0 {
		return nil, apierrors.NewNotFound(nodeMetricsGR, req.Name)
	}
	return &items[0], nil
}

func (s *Scraper) listNodes(ctx context.Context, env registry.Env, req registry.Request) (runtime.Object, error) {
	ls, fs, err := selectors(req)
	if err != nil {
		return nil, err
	}
	objs, err := env.Objects(nodesGVR).List(ctx, "", ls, nil)
	if err != nil {
		return nil, err
	}
	var nodes []*corev1.Node
	for _, o := range objs {
		n := o.(*corev1.Node)
		if fs.Matches(fields.Set{"metadata.name": n.Name, "metadata.namespace": ""}) {
			nodes = append(nodes, n)
		}
	}
	if ls.Empty() && fs.Empty() {
		s.keepOnly(nodes)
	}
	return &metricsv1beta1.NodeMetricsList{Items: s.nodeMetrics(ctx, env, nodes)}, nil
}

// nodeMetrics are the metrics of the nodes that could be scraped, by name.
func (s *Scraper) nodeMetrics(ctx context.Context, env registry.Env, nodes []*corev1.Node) []metricsv1beta1.NodeMetrics {
	got := s.scrapeAll(ctx, env, nodes)
	items := []metricsv1beta1.NodeMetrics{}
	for _, n := range nodes {
		u, ok := got[n.Name]
		if !ok || u.node == nil {
			continue
		}
		items = append(items, metricsv1beta1.NodeMetrics{
			ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels, CreationTimestamp: metav1.NewTime(env.Clock().Now())},
			Timestamp:  metav1.NewTime(u.node.ts),
			Window:     metav1.Duration{Duration: u.node.window},
			Usage:      quantities(u.node.nanoCores, u.node.mem),
		})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	return items
}

func (s *Scraper) getPod(ctx context.Context, env registry.Env, req registry.Request) (runtime.Object, error) {
	obj, err := env.Objects(podsGVR).Get(ctx, req.Namespace, req.Name)
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewNotFound(podListerGR, req.Name)
	}
	if err != nil {
		return nil, err
	}
	items, err := s.podMetrics(ctx, env, []*corev1.Pod{obj.(*corev1.Pod)})
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, apierrors.NewNotFound(podMetricsGR, req.Namespace+"/"+req.Name)
	}
	return &items[0], nil
}

func (s *Scraper) listPods(ctx context.Context, env registry.Env, req registry.Request) (runtime.Object, error) {
	ls, fs, err := selectors(req)
	if err != nil {
		return nil, err
	}
	objs, err := env.Objects(podsGVR).List(ctx, req.Namespace, ls, nil)
	if err != nil {
		return nil, err
	}
	var pods []*corev1.Pod
	for _, o := range objs {
		p := o.(*corev1.Pod)
		if fs.Matches(fields.Set{"metadata.name": p.Name, "metadata.namespace": p.Namespace}) {
			pods = append(pods, p)
		}
	}
	items, err := s.podMetrics(ctx, env, pods)
	if err != nil {
		return nil, err
	}
	return &metricsv1beta1.PodMetricsList{Items: items}, nil
}

// podMetrics are the metrics of the Running pods whose node could be
// scraped and reported each of their running containers, ordered by
// namespace and name.
func (s *Scraper) podMetrics(ctx context.Context, env registry.Env, pods []*corev1.Pod) ([]metricsv1beta1.PodMetrics, error) {
	wanted := map[string]bool{}
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" {
			wanted[p.Spec.NodeName] = true
		}
	}
	var nodes []*corev1.Node
	for name := range wanted {
		obj, err := env.Objects(nodesGVR).Get(ctx, "", name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, obj.(*corev1.Node))
	}
	got := s.scrapeAll(ctx, env, nodes)
	items := []metricsv1beta1.PodMetrics{}
	for _, p := range pods {
		u, ok := got[p.Spec.NodeName]
		if !ok || p.Status.Phase != corev1.PodRunning {
			continue
		}
		if m, ok := podMetricsOf(p, u, env); ok {
			items = append(items, m)
		}
	}
	sort.Slice(items, func(i, j int) bool {
		if items[i].Namespace != items[j].Namespace {
			return items[i].Namespace < items[j].Namespace
		}
		return items[i].Name < items[j].Name
	})
	return items, nil
}

// podMetricsOf builds a pod's metrics from its node's scrape: every
// running container must have a usage.
func podMetricsOf(p *corev1.Pod, u nodeUsage, env registry.Env) (metricsv1beta1.PodMetrics, bool) {
	m := metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels,
		CreationTimestamp: metav1.NewTime(env.Clock().Now())}}
	running := map[string]bool{}
	for _, st := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if st.State.Running != nil {
			running[st.Name] = true
		}
	}
	names := make([]string, 0, len(p.Spec.InitContainers)+len(p.Spec.Containers))
	for _, c := range p.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range p.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, name := range names {
		cu, ok := u.ctrs[ctrID{ns: p.Namespace, pod: p.Name, name: name}]
		if !ok {
			if running[name] {
				return m, false // not scraped yet
			}
			continue
		}
		if cu.ts.After(m.Timestamp.Time) {
			m.Timestamp = metav1.NewTime(cu.ts)
		}
		m.Window.Duration = max(m.Window.Duration, cu.window)
		m.Containers = append(m.Containers, metricsv1beta1.ContainerMetrics{Name: name, Usage: quantities(cu.nanoCores, cu.mem)})
	}
	return m, len(m.Containers) > 0
}
