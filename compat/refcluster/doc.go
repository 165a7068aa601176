// Package refcluster runs the real Kubernetes control plane, v1.37.2, as
// the reference that setpoint is compared with: etcd and kube-apiserver,
// and optionally kube-controller-manager and kube-scheduler, as separate
// processes on loopback ports, configured as kubeadm configures them
// (static-token and client-certificate authentication, Node and RBAC
// authorization, service-account tokens, --service-cluster-ip-range
// 10.96.0.0/12).
//
// The executables come from FindBinaries: built once from the
// tools/reference (k8s.io/kubernetes) and tools/etcd modules of this
// repository into .bin/, keyed by a hash of their sources, or taken from
// $SETPOINT_REFERENCE_BIN_DIR. The first build takes minutes; later starts
// take seconds (kube-apiserver's own start-up, about 2-3 s).
//
// Calling protocol: Start returns once kube-apiserver answers /readyz, and,
// with Options.ControllerManager, once the default namespace has its
// default ServiceAccount (so Pods can be created). Reach the cluster with
// Kubeconfig (kubectl, client-go), or with URL, CAFile and Token, or with
// HTTPClient. Stop ends the components in reverse order (kube-apiserver
// before etcd) and removes the directory if Start made it. If the calling
// process dies, Linux kills the components with it.
//
//	ref := refcluster.StartT(t, refcluster.Options{ControllerManager: true})
//	out, err := exec.Command("kubectl", "--kubeconfig", ref.Kubeconfig(), "get", "ns").CombinedOutput()
//
// A differential test starts setpoint (package testenv) beside it and
// sends both the same requests.
package refcluster
