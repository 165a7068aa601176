// Package client is setpoint's one client for controllers, the
// counterpart of controller-runtime's pkg/client: a reconciler holds one
// client.Client and nothing else to read and write objects of any Go type
// of the manager's scheme (typed kinds, your own custom resource types
// after their AddToScheme, *unstructured.Unstructured and
// *metav1.PartialObjectMetadata).
//
// It is its own package, not part of manager, so that reconcilers and
// their unit tests (package client/fake) depend on the interface alone;
// manager.GetClient returns the implementation wired to the manager's
// informers, discovery and rest client. New(Options{Config: cfg, Scheme:
// s}) makes one without a manager or cache, reading from the server, as
// controller-runtime's client.New(cfg, client.Options{Scheme: s}): the
// client tests use to set up and check what a controller did.
//
// # Reads come from the cache
//
// Get and List read the manager's shared informers (Cache), starting the
// informer of a kind on first use (cluster-wide, or the manager's
// Namespace) and waiting for it to sync; before the manager runs they fail
// with ErrCacheNotStarted. They fill the caller's object or list with
// deep copies: the informers' compaction (informer.CompactShare) makes
// cached objects share sub-objects, and a copy is the caller's to modify.
// UnsafeDisableDeepCopy skips the copy for hot read-only paths: the
// result then shares maps, slices and pointers with the cache and must not
// be modified (testenv's mutation detector reports it when it is). List
// filters by namespace, label selector and field selector; a field
// selector needs a field index (FieldIndexer, manager.GetFieldIndexer),
// except on metadata.name and metadata.namespace. Reads of
// *metav1.PartialObjectMetadata and its list (apiVersion and kind set)
// use an informer of their own, apart from the typed one of the kind,
// that lists and watches the server's metadata-only view
// (as=PartialObjectMetadata, in protobuf as client-go's metadata client
// asks), so it holds metadata only. NewAPIReader (and
// manager.GetAPIReader) reads from the server instead.
//
// # Writes go to the server
//
// Create, Update, Patch (MergeFrom, StrategicMergeFrom, RawPatch with a
// JSON patch, Apply for server-side apply), Delete and DeleteAllOf go to
// the API server through package rest, and fill obj with the server's
// answer. Status() writes the status subresource; SubResource(name) reads
// and writes any other (scale, eviction). Kinds map to resources through
// the scheme and discovery (RESTMapper); objects sent without apiVersion
// and kind get them from the scheme.
//
// Differences from controller-runtime: options are the types of this
// package (InNamespace, MatchingLabels, MatchingFields, FieldOwner,
// ForceOwnership, DryRunAll, GracePeriodSeconds, PropagationPolicy,
// Preconditions, UnsafeDisableDeepCopy) with the same names; there is no
// Watch on the client and no per-object cache options; metadata-only
// objects can be read, patched and deleted but not created or updated.
package client
