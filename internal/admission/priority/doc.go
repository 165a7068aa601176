// Package priority is the Priority admission plugin, after Kubernetes'
// plugin/pkg/admission/priority.
//
// Pods (mutating, create): spec.priority and spec.preemptionPolicy are
// resolved from spec.priorityClassName, or, when the pod names none, from
// the global default class (the lowest valued one if several claim it;
// without one, priority 0 and PreemptLowerPriority, the class name left
// empty). A missing class ("no PriorityClass with name x was found"), or a
// priority or preemption policy the pod sets that differs from the class's,
// is a 403. On update the resolved values a client left out are kept.
//
// PriorityClasses (validating, create and update): a class may be the
// global default only while no other class is ("PriorityClass x is
// already marked as default. Only one default can exist", 403).
//
// The classes are read as kube's plugin reads its informer: the named
// class by a consistent get, the default from the watch cache.
package priority
