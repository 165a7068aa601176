// Package builder assembles controllers for a manager with typed sources
// and no code generation.
//
// Go has no generic methods, so a kind is named by a generic function
// returning a Source, and the Builder's methods take Sources:
//
//		err := builder.ControllerManagedBy(mgr).
//			For(builder.Kind[*appsv1.Deployment](), predicate.GenerationChanged()).
//			Owns(builder.Kind[*appsv1.ReplicaSet]()).
//			Watches(builder.Kind[*corev1.ConfigMap]().Map(func(cm *corev1.ConfigMap) []reconcile.Request {
//				return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: cm.Namespace, Name: cm.Labels["app"]}}}
//			})).
//			WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
//			Complete(r)
//
//	  - For: the kind reconciled; each event enqueues the object itself.
//	  - Owns: a kind the controller creates; each event enqueues the
//	    object's controller owner when that owner is of the For kind.
//	  - Watches: any kind with a mapping of your own (TypedSource.Map),
//	    type-checked at compile time.
//	  - Predicates per watch, and WithEventFilter for all of them.
//
// Kind[T] resolves T through the manager: its kind from the scheme, its
// resource and scope from discovery. KindAt[T](gvr, namespaced) names the
// resource explicitly, for custom resources, *unstructured.Unstructured and
// types the scheme lacks. Resolution happens in Complete (or Build), which
// reports every error: a missing For, a kind the server does not serve.
// Informers are shared: two controllers watching one kind share one
// informer (and one cache) through the manager.
//
// The controller is named after the For resource ("deployments") unless
// Named says otherwise; it gets the manager's metrics, clock, logger and
// cache-sync timeout unless WithOptions sets them.
//
// WebhookManagedBy[T] registers T's admission webhooks (a
// webhook.Defaulter[T], a webhook.Validator[T]) on the manager's webhook
// server, at webhook.MutatePath and ValidatePath of T's kind.
package builder
