package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// volumeBindTimeout is how long a binding waits for the pod's claims to be
// bound once their volumes were chosen (kube-scheduler's default bind
// timeout).
const volumeBindTimeout = 600 * time.Second

// volumeBinding is what binding a pod does to its WaitForFirstConsumer
// claims before the pod's own binding: volumes to pre-bind (their
// claimRef set, for the PV controller to finish) and claims to provision
// (annotated with the selected node); then it waits for every claim of
// the pod to be bound.
type volumeBinding struct {
	prebind   map[*corev1.PersistentVolumeClaim]*corev1.PersistentVolume
	provision []*corev1.PersistentVolumeClaim
	claims    []string
}

// assumeVolumes plans the pod's delayed claims on node and keeps the
// chosen volumes from other pods. nil when every claim is bound. Called
// with the mutex held.
func (s *Scheduler) assumeVolumes(cy *cycle, node string) *volumeBinding {
	vs := cy.volumes
	if vs == nil || len(vs.delayed) == 0 {
		return nil
	}
	plan, ok := vs.plan(s.cache.nodes[node].node)
	if !ok {
		return nil
	}
	vb := &volumeBinding{prebind: map[*corev1.PersistentVolumeClaim]*corev1.PersistentVolume{}, claims: claimNames(cy.pod)}
	for c, pv := range plan {
		if pv == nil {
			vb.provision = append(vb.provision, c)
			continue
		}
		vb.prebind[c] = pv
		s.assumedPVs[pv.Name] = true
	}
	return vb
}

// releaseVolumes gives the chosen volumes back to the other pods' choice.
func (s *Scheduler) releaseVolumes(vb *volumeBinding) {
	s.mu.Lock()
	for _, pv := range vb.prebind {
		delete(s.assumedPVs, pv.Name)
	}
	s.mu.Unlock()
}

// bindVolumes writes the pre-bindings and the selected-node annotations,
// then waits until every claim of the pod is bound.
func (s *Scheduler) bindVolumes(ctx context.Context, pod *corev1.Pod, node string, vb *volumeBinding) error {
	for c, pv := range vb.prebind {
		pv = pv.DeepCopy()
		pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
			Namespace: c.Namespace, Name: c.Name, UID: c.UID, ResourceVersion: c.ResourceVersion}
		metav1.SetMetaDataAnnotation(&pv.ObjectMeta, annBoundByCtrl, "yes")
		if _, err := s.pvRes.Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("pre-bind volume %s to claim %s/%s: %w", pv.Name, c.Namespace, c.Name, err)
		}
	}
	for _, c := range vb.provision {
		cur, err := s.pvcRes.Namespace(c.Namespace).Get(ctx, c.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("claim %s/%s: %w", c.Namespace, c.Name, err)
		}
		if cur.Annotations[annSelectedNode] == node {
			continue
		}
		metav1.SetMetaDataAnnotation(&cur.ObjectMeta, annSelectedNode, node)
		if _, err := s.pvcRes.Namespace(c.Namespace).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("select node %s for claim %s/%s: %w", node, c.Namespace, c.Name, err)
		}
	}
	return s.waitClaimsBound(ctx, pod.Namespace, vb.claims)
}

var errVolumeBindTimeout = errors.New("timed out waiting for the condition")

// waitClaimsBound polls the claims informer until every claim is bound.
func (s *Scheduler) waitClaimsBound(ctx context.Context, ns string, claims []string) error {
	deadline := s.opts.Clock.Now().Add(volumeBindTimeout)
	tick := s.opts.Clock.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		done := true
		for _, name := range claims {
			c, err := s.pvcs.Lister().Namespace(ns).Get(name)
			if err != nil {
				return fmt.Errorf("persistentvolumeclaim %q not found", name)
			}
			if !fullyBound(c) {
				done = false
			}
		}
		if done {
			return nil
		}
		if s.opts.Clock.Now().After(deadline) {
			return fmt.Errorf("binding volumes: %w", errVolumeBindTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C():
		}
	}
}
