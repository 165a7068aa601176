// Package predicate filters the events that reach a controller's queue.
//
// An event source (an informer handler, see package handler) asks every
// Predicate of its watch whether an event should enqueue anything; one
// false drops it. Predicates see events, not requests: they decide before
// the event is mapped to the keys it triggers, and they never see the
// queue.
//
// Predicates work on metav1.Object, so one predicate value serves every
// kind: GenerationChanged, LabelChanged, AnnotationChanged,
// ResourceVersionChanged, Labels (a label selector) and the combinators
// And, Or and Not. Funcs builds a predicate from functions (a nil function
// lets the event through); NewFilter applies one test to every event's
// object; Typed narrows a test to one Go type, for logic that needs the
// object's fields.
//
// # Events
//
//   - Create: an object appeared, either in the informer's initial list
//     (IsInInitialList) or later.
//   - Update: an object changed. A periodic resync delivers an update whose
//     ObjectOld and ObjectNew are the same object; "changed" predicates
//     (GenerationChanged and friends) drop resyncs for that reason.
//   - Delete: an object went away. DeleteStateUnknown says the deletion
//     was inferred from a relist and Object is the last state the cache
//     knew.
//
// Predicates must be pure and fast: they run on the informer's handler
// goroutine and must not modify the objects they are shown, which are
// shared with the cache.
package predicate
