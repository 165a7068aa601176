package scheduler

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/manager"
)

// addInformers takes the manager's shared informers of namespaces (the
// labels namespace selectors match), claims, volumes and storage classes
// (volume binding) and disruption budgets (preemption). A change of a
// claim, volume or class may let a waiting pod fit: it moves the
// unschedulable pods.
func (s *Scheduler) addInformers(mgr *manager.Manager) error {
	none := time.Duration(0)
	opts := informer.HandlerOptions{Name: "scheduler", ResyncPeriod: &none}
	nsInf, _, err := manager.Informer[*corev1.Namespace](mgr)
	if err != nil {
		return err
	}
	setNS := func(ns *corev1.Namespace) {
		s.mu.Lock()
		s.namespaces[ns.Name] = labels.Set(ns.Labels)
		s.mu.Unlock()
	}
	if s.nsReg, err = nsInf.AddEventHandler(informer.HandlerFuncs[*corev1.Namespace]{
		AddFunc:    func(ns *corev1.Namespace, _ bool) { setNS(ns) },
		UpdateFunc: func(_, ns *corev1.Namespace) { setNS(ns); s.queue.moveAll() },
		DeleteFunc: func(ns *corev1.Namespace, _ bool) {
			s.mu.Lock()
			delete(s.namespaces, ns.Name)
			s.mu.Unlock()
		},
	}, opts); err != nil {
		return fmt.Errorf("namespace handler: %w", err)
	}
	if s.pvcs, _, err = manager.Informer[*corev1.PersistentVolumeClaim](mgr); err != nil {
		return err
	}
	if s.pvs, _, err = manager.Informer[*corev1.PersistentVolume](mgr); err != nil {
		return err
	}
	if s.classes, _, err = manager.Informer[*storagev1.StorageClass](mgr); err != nil {
		return err
	}
	if s.pdbs, _, err = manager.Informer[*policyv1.PodDisruptionBudget](mgr); err != nil {
		return err
	}
	move := func() { s.queue.moveAll() }
	if err := onChange(s.pvcs, opts, move); err != nil {
		return err
	}
	if err := onChange(s.pvs, opts, move); err != nil {
		return err
	}
	return onChange(s.classes, opts, move)
}

// onChange runs fn on every live add and update of inf's objects.
func onChange[T informer.Object](inf *informer.Informer[T], opts informer.HandlerOptions, fn func()) error {
	_, err := inf.AddEventHandler(informer.HandlerFuncs[T]{
		AddFunc: func(_ T, initial bool) {
			if !initial {
				fn()
			}
		},
		UpdateFunc: func(_, _ T) { fn() },
	}, opts)
	if err != nil {
		return fmt.Errorf("%T handler: %w", *new(T), err)
	}
	return nil
}

// nsLabels returns a namespace's labels (nil when unknown). Called with
// the mutex held.
func (s *Scheduler) nsLabels(ns string) labels.Set { return s.namespaces[ns] }
