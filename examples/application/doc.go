// Package application is the seeds' Application operator on setpoint's
// library: seed 001 §8.3's "应用管理器" (a custom resource with an image,
// a replica count and a port, served by a Deployment) with seed 004's
// finalizer (§5) and its practices (§7: idempotence, retries with
// backoff, status with observedGeneration and conditions, events).
// config/crd.yaml is the CustomResourceDefinition; cmd/application runs
// the operator as a program.
//
// # The resource
//
// Application (apps.setpoint.dev/v1, namespaced, short name app) has
// spec.image (required), spec.replicas (0..100, default 1) and spec.port
// (1..65535, default 80), checked and defaulted by the server from the
// CRD's schema; status is written through the status subresource, and the
// scale subresource maps spec.replicas and status.readyReplicas, so
// `kubectl scale application x --replicas=3` works. `kubectl get
// applications` shows Image, Desired, Ready, Phase and Age.
//
// The Go types Application and ApplicationList are hand-written (no code
// generation). AddToScheme registers them; a manager whose Options.Scheme
// holds them resolves Kind[*Application] through discovery like any
// built-in kind, and names it in owner references and events.
//
// # What it promises
//
// For an Application a in namespace ns, the operator keeps:
//
//   - the finalizer apps.setpoint.dev/cleanup on a, added before anything
//     else is created;
//   - the record ConfigMap setpoint-records/application-<ns>-<name>
//     (namespace created when missing) holding a's namespace, name and
//     uid: the "external resource" of seed 004 §5, which cannot be owned
//     by a (another namespace) and is therefore deleted by the finalizer;
//   - the Deployment ns/<name>: spec.replicas, selector and pod label
//     app=<name>, one container "app" with the image and a TCP
//     containerPort "http" = spec.port;
//   - the Service ns/<name>: ClusterIP, selector app=<name>, port "http"
//     spec.port → targetPort spec.port;
//   - both with a controller ownerReference to a (blockOwnerDeletion) and
//     the label app.kubernetes.io/managed-by=application-operator; edits
//     to the fields above are set back, a deleted one is created again,
//     fields it does not own (other labels, the clusterIP, defaults) are
//     kept;
//   - status.readyReplicas = the Deployment's readyReplicas,
//     status.observedGeneration = a's generation, and a phase: Pending (no
//     pod ready yet), Progressing (rolling out or scaling), Running (the
//     Deployment observed its spec and runs exactly spec.replicas pods,
//     all updated and ready), Failed (the Deployment's progress deadline
//     passed, or the operator is blocked), Terminating (a is being
//     deleted). Conditions Available (ready >= desired) and Progressing
//     (True while converging; False with reason RolloutComplete,
//     ProgressDeadlineExceeded or Blocked) carry observedGeneration. The
//     seed's state machine (Pending, Provisioning, Running, Updating,
//     Failed, Terminating) maps Provisioning and Updating to Progressing,
//     the name Deployments use for both.
//
// When a is deleted, the operator sets phase Terminating, deletes the
// record (a missing one is fine) and then removes the finalizer; the
// server deletes a and the garbage collector its Deployment and Service.
// A failed step keeps the finalizer and is retried with backoff.
//
// A Deployment or Service of that name that is not ours (controlled by
// something else, or uncontrolled without the managed-by label) is never
// touched: a is Failed (Progressing reason Blocked), a Warning NotOwned
// event says why, and the reconcile is retried with backoff until the
// name is free. A name that cannot name a Service (dots, over 63
// characters) or a record gets a Warning InvalidName event, phase Failed
// and no finalizer: only recreating it under another name helps.
//
// Events on a, from component application-operator: Created (Deployment,
// Service, record), Updated (Deployment or Service set back to the spec),
// Ready (the phase turned Running), Cleanup (record deleted), and the
// Warnings Failed (a step failed; retried), NotOwned and InvalidName.
//
// # Calling protocol
//
//	scheme, _ := manager.NewScheme()
//	_ = application.AddToScheme(scheme)
//	mgr, err := manager.New(manager.Options{Config: cfg, Scheme: scheme})
//	err = application.Add(mgr, application.Options{})
//	err = mgr.Start(ctx)
//
// Add reaches discovery: the CRD (CRDManifest, config/crd.yaml) must be
// established before it is called, and the scheme must hold Application;
// both are reported as errors otherwise. Add wires
//
//	builder.ControllerManagedBy(mgr).
//		For(builder.Kind[*Application](), ...).
//		Owns(builder.Kind[*appsv1.Deployment]()).
//		Owns(builder.Kind[*corev1.Service]())
//
// so a change of the Deployment's readiness, or an edit or deletion of
// either object, brings the Application back; updates of an Application
// that change neither its spec, labels, finalizers nor deletion (its own
// status writes) are dropped.
package application
