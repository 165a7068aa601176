// Package autoservice is seed 000's "完整 Controller 示例" on setpoint's
// library: every Deployment annotated auto-service: "true" gets a Service
// named <deployment>-service, and the Service is kept as the Deployment
// wants it. cmd/autoservice runs it as a program.
//
// # What it promises
//
// For a Deployment d with annotation auto-service: "true", the Service
// d.Namespace/<d.Name>-service has type ClusterIP, the selector
// d.spec.selector.matchLabels, one port per distinct containerPort of the
// pod template (port = targetPort = containerPort, name and protocol kept)
// or port 80 → 80 when no container declares one, the label
// app.kubernetes.io/managed-by: auto-service, and a controller
// ownerReference to d with blockOwnerDeletion. The controller converges to
// that after every change:
//
//   - the Service deleted: created again;
//   - the Service edited (selector, ports, type, label, owner reference):
//     set back; fields it does not own (clusterIP, other labels,
//     annotations) are left as they are;
//   - the annotation removed or set to anything but "true": the Service is
//     deleted, but only when d controls it (same uid);
//   - d deleted: nothing; the garbage collector deletes the Service
//     through its ownerReference (and, for a foreground deletion, d waits
//     for it, since the reference blocks owner deletion).
//
// A Service of that name that is not ours is never modified or deleted:
// one controlled by something else, or one without a controller and
// without the managed-by label (written by hand). The reconcile then fails
// with *NotOwnedError, records a Warning event ServiceNotOwned and is
// retried with backoff. An orphan that carries the label (left by
// `kubectl delete deployment --cascade=orphan`) is adopted. A Deployment
// that cannot have a Service (no matchLabels; a name that makes an invalid
// Service name) gets a Warning event InvalidDeployment and a terminal
// error: only a change to it is worth another try.
//
// Events on d, through the manager's recorder: ServiceCreated,
// ServiceUpdated, ServiceDeleted (Normal).
//
// # The seed's walk-through, in our terms
//
// The seed builds a client-go controller by hand; each of its steps has a
// counterpart here that the library provides:
//
//   - SharedInformerFactory with Deployment and Service informers, the
//     listers and HasSynced: the manager's client (mgr.GetClient), whose
//     reads come from the manager's shared informers (deep copies),
//     started on first use and synced before a read answers.
//   - enqueueDeployment on add, update and delete: builder's For(Deployment)
//     with handler.Object; a predicate drops updates that change neither
//     spec (generation) nor annotations, so status churn of a rollout costs
//     nothing.
//   - handleServiceDelete, which walked ownerReferences to find the
//     Deployment: Owns(Service), which maps every event of a Service to its
//     controller owner, for edits as well as deletions (the seed noticed
//     only deletions, so a hand edit stayed).
//   - workqueue.NewRateLimitingQueue, processNextWorkItem, Forget and
//     AddRateLimited: package controller's workers; an error returned by
//     Reconcile is retried with per-key exponential backoff, a conflict at
//     once, a TerminalError never.
//   - syncHandler: Reconcile, which reads the Deployment from the cache,
//     and then, unlike the seed (which only created a missing Service),
//     converges the Service with controllerutil.CreateOrUpdate (an update
//     only when something we own differs) or deletes it when the
//     annotation is gone.
//   - metav1.NewControllerRef: controllerutil.SetControllerReference, with
//     the kind from the manager's scheme.
//   - fmt.Println: structured slog logs with namespace, deployment and
//     service attributes, and Events on the Deployment.
//   - Run(2, stopCh) and wait.NeverStop: mgr.Start(ctx) with two workers;
//     cancelling ctx drains in-flight reconciles, writes queued events and
//     releases the leader Lease when leader election is on.
//
// # Calling protocol
//
//	mgr, err := manager.New(manager.Options{Config: cfg})
//	err = autoservice.Add(mgr, autoservice.Options{})
//	err = mgr.Start(ctx)
//
// Add resolves Deployment and Service through discovery, so the API
// server must be reachable when it is called.
package autoservice
