// Package metrics serves metrics.k8s.io/v1beta1, the resource metrics API
// that metrics-server adds to a cluster and that `kubectl top` and the
// horizontal pod autoscaler read: NodeMetrics (nodes, cluster-scoped) and
// PodMetrics (pods, namespaced), get and list with label and field
// (metadata.name, metadata.namespace) selectors, never stored.
//
// # Where the numbers come from
//
// As metrics-server, the API server scrapes each node's kubelet
// /metrics/resource (Prometheus text) through Env.NodeTransport, at the
// node's preferred address (Hostname, InternalDNS, InternalIP,
// ExternalDNS, ExternalIP) and daemonEndpoints.kubeletEndpoint.Port. A
// node simulated by setpoint's agent shares one listener with its
// siblings and is asked at /node/<name>/metrics/resource; a 404 there
// falls back to the kubelet's own /metrics/resource, so a real kubelet
// joining the cluster is read too.
//
// Memory is the working set as scraped. Cpu is a rate, as metrics-server
// computes it, over two scrapes of the same container run (same
// container_start_time_seconds): the cumulative cpu seconds' difference
// over the samples' timestamps' difference, which is the window reported.
// The previous scrape of each node is kept in memory by the Resources of
// one server (a Scraper): this is the one state the package keeps, soft
// (losing it costs one window) and bounded by the nodes (a list of all
// nodes forgets the deleted ones). A container seen
// for the first time has its rate since it started (cumulative seconds
// over the time since container_start_time_seconds, that window), where
// metrics-server would wait for a second scrape; a request at the same
// timestamp as the previous scrape (a fake clock that did not move) gets
// the rates of that scrape. Node cpu is the rate of node_cpu_usage_seconds_total
// over two scrapes, or the sum of its containers' rates on the first.
//
// Pods are reported while Running on a node whose scrape has all their
// running containers, with the pod's labels; nodes with their labels. A
// get of what has no metrics answers 404 `podmetrics.metrics.k8s.io
// "ns/name" not found` (`nodemetrics.metrics.k8s.io "name" not found`),
// and of a pod or node that does not exist `pods "name" not found`
// (`node "name" not found`), as metrics-server words them.
//
// # The APIService
//
// kube-apiserver serves metrics.k8s.io only through an aggregated
// APIService (v1beta1.metrics.k8s.io, pointing at metrics-server). Here
// the group is built in and has no local APIService; creating
// v1beta1.metrics.k8s.io (metrics-server's manifest does) stores the
// object as any APIService, which the server does not act on: discovery,
// `kubectl top` and the autoscaler keep reading the built-in group, and
// deleting the APIService changes nothing either.
package metrics
