// Package webhook is the MutatingAdmissionWebhook and
// ValidatingAdmissionWebhook admission plugins: they call the webhooks of
// the MutatingWebhookConfiguration and ValidatingWebhookConfiguration
// objects with an AdmissionReview, as kube-apiserver does.
//
// # What the plugins promise
//
//   - Configurations are read from the server's watch caches as they are
//     (kube-apiserver reads its informers) and kept compiled (selectors
//     parsed, match conditions compiled, defaults applied); the compiled
//     set is rebuilt only when a configuration object changed. Webhooks
//     are taken in kube's order: configurations by name, webhooks in their
//     order.
//   - A webhook is called when, in kube's order, its namespaceSelector
//     (namespaces by their labels from the watch cache; a namespace being
//     written by its own; cluster-scoped objects always match), its
//     objectSelector (the object or the old object), one of its rules
//     (operations, apiGroups, apiVersions, resources with `res/sub` and
//     `*` wildcards, scope) and its matchConditions (CEL, the environment
//     of internal/registry/admissionregistration, kube's cost budget;
//     an error refuses with 403 under Fail, skips under Ignore) select the
//     write. The webhook configurations, admission policies and bindings
//     and the review resources (TokenReview, the access reviews) are never
//     sent to webhooks.
//   - The review is AdmissionReview v1, or v1beta1 when that is the first
//     admissionReviewVersions setpoint speaks, with kube's request fields;
//     the call goes through internal/webhookclient (URL or Service,
//     caBundle, timeoutSeconds, `?timeout=` rounded up to a second).
//   - A dry-run write to a webhook whose sideEffects is not None or
//     NoneOnDryRun is refused (400, `admission webhook "x" does not
//     support dry run`), whatever the failure policy.
//   - A webhook that cannot be called or answers what cannot be used
//     fails the write under failurePolicy Fail with kube's 500 (`Internal
//     error occurred: failed calling webhook "x": failed to call webhook:
//     …`, `…: received invalid webhook response: …`) and is skipped under
//     Ignore (audit annotation failed-open.<type>.webhook.admission.k8s.io/
//     round_R_index_I). A refusal is the webhook's Status, its message
//     prefixed `admission webhook "x" denied the request: `.
//   - Warnings of the answer become Warning headers; its auditAnnotations
//     become audit annotations `<webhook>/<key>`.
//   - Validating webhooks are called in parallel (the first refusal to
//     arrive decides); mutating webhooks in order, each JSON patch applied
//     to the object (then defaulted by the kind) before the next call, the
//     annotations mutation.webhook.admission.k8s.io/round_R_index_I and,
//     at audit level Request, patch.webhook.admission.k8s.io/…; webhooks
//     with reinvocationPolicy IfNeeded are called once more when a later
//     webhook changed the object.
//   - matchPolicy Equivalent (the default): a hook whose rules do not
//     select the request's resource is called when they select an
//     equivalent one (registry.EquivalentResolver: another version of a
//     custom resource, autoscaling/v1 and v2 HorizontalPodAutoscalers,
//     core/v1 and events.k8s.io/v1 Events), the rules tried in order, with
//     that resource's kind and the objects converted to it (kind and
//     resource name it, requestKind and requestResource the client's); a
//     mutating hook's patch is applied at that version and the result
//     converted back. Exact calls only hooks whose rules select the
//     request's own resource.
//   - Deletes: both phases see them, as in kube-apiserver (the
//     validating webhooks get the old object).
//   - Metrics: apiserver_admission_webhook_admission_duration_seconds,
//     …_request_total, …_rejection_count, …_fail_open_count.
//
// # What differs from kube-apiserver
//
//   - The options object of the request carries only dryRun (not
//     fieldManager or the delete options the client sent): the admission
//     attributes carry no more.
//   - The reinvocation round covers the webhooks only (no admission
//     plugin runs after the webhooks in setpoint's mutating phase).
package webhook
