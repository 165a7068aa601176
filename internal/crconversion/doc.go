// Package crconversion converts custom objects between the versions of a
// CustomResourceDefinition whose spec.conversion.strategy is Webhook, as
// kube-apiextensions-apiserver does: it builds a ConversionReview (v1, or
// v1beta1 when that comes first among the CRD's conversionReviewVersions
// that this server speaks), posts it through a Caller (the API server's
// webhook client) and checks the answer as Kubernetes checks it.
//
// What it promises:
//   - Objects already at the desired apiVersion are never sent; a call
//     with nothing to convert makes no request. An object with nothing but
//     apiVersion and kind is converted without a call.
//   - One review per Convert or ConvertList call: a list is converted in
//     one exchange, its objects in order.
//   - The answer is checked as kube-apiextensions-apiserver checks it:
//     apiVersion/kind of a v1 review, response present, response.uid equal
//     to the request's (v1), result.status Success (else its message),
//     as many converted objects as sent, each of the desired apiVersion and
//     the original kind, with the original name, namespace and uid. Of
//     metadata only labels and annotations may change (validated when
//     they do); everything else in metadata is restored from the original.
//   - Failures are worded as Kubernetes words them
//     (`conversion webhook for <group>/<version>, Kind=<Kind> failed: …`)
//     and returned as kube-apiserver answers an error that is not a Status:
//     500 with an empty reason and that message. A call is bounded only by
//     the caller's context, as Kubernetes sets no timeout of its own; one
//     that outlives the context's deadline is the 504 Timeout of
//     kube-apiserver's request timeout.
//
// A Converter is immutable and safe for concurrent use.
package crconversion
