package pki

import (
	"fmt"
	"path/filepath"
)

// The identities of the control plane's components, as Kubernetes names
// them (the default RBAC policy binds its roles to these users and groups).
const (
	// ControllerManagerUser is kube-controller-manager's user.
	ControllerManagerUser = "system:kube-controller-manager"
	// SchedulerUser is kube-scheduler's user.
	SchedulerUser = "system:kube-scheduler"
	// NodeUserPrefix + the node name is a kubelet's user, in NodesGroup.
	NodeUserPrefix = "system:node:"
	NodesGroup     = "system:nodes"
)

// Kubeconfig files of the components in the data directory (kubeadm's
// names under /etc/kubernetes).
const (
	ControllerManagerKubeconfig = "controller-manager.conf"
	SchedulerKubeconfig         = "scheduler.conf"
)

// NodeUser is the user of the kubelet of node name.
func NodeUser(name string) string { return NodeUserPrefix + name }

// WriteComponentKubeconfigs writes ControllerManagerKubeconfig and
// SchedulerKubeconfig to dir: kubeconfigs for server (and peers, as
// WriteKubeconfig) authenticating with new client certificates of
// ControllerManagerUser and SchedulerUser signed by ca.
func WriteComponentKubeconfigs(dir, server string, peers []string, ca *CA) error {
	for _, c := range []struct{ file, user string }{
		{ControllerManagerKubeconfig, ControllerManagerUser},
		{SchedulerKubeconfig, SchedulerUser},
	} {
		certPEM, keyPEM, err := ca.IssueClient(c.user, nil)
		if err != nil {
			return fmt.Errorf("kubeconfig of %s: %w", c.user, err)
		}
		if err := WriteClientKubeconfig(filepath.Join(dir, c.file), server, peers, ca.CertPEM, c.user, certPEM, keyPEM); err != nil {
			return fmt.Errorf("kubeconfig of %s: %w", c.user, err)
		}
	}
	return nil
}
