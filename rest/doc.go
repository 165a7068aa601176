// Package rest is setpoint's Kubernetes REST client: it loads a kubeconfig,
// speaks JSON to any Kubernetes-compatible API server over HTTP/2, and
// offers typed and dynamic accessors with watch decoding, retries and a
// client-side rate limiter. It does not use client-go.
//
// # Configuration
//
// A Config names the server (Host), the credentials (BearerToken or
// BearerTokenFile, client certificates in TLS) and the trust (TLS.CAData or
// CAFile, Insecure, ServerName). ConfigFromKubeconfig and
// ConfigFromKubeconfigBytes build one from a kubeconfig context; LoadDefault
// uses the first file of $KUBECONFIG or ~/.kube/config. New turns a Config
// into a Client; the Config is not retained.
//
// # Credentials
//
// As client-go: a BearerTokenFile is read again every TokenFileRereadPeriod
// (a minute) and after a 401, keeping the last token when the file cannot
// be read, so a rotated token is picked up. InClusterConfig configures a
// client in a pod (KUBERNETES_SERVICE_HOST/PORT, the mounted token, ca.crt
// and namespace under ServiceAccountDir; InClusterConfigFrom reads another
// directory). ExecProvider (a kubeconfig user's exec stanza) runs a
// credential plugin of client.authentication.k8s.io/v1 or v1beta1 with
// KUBERNETES_EXEC_INFO, its args and env, standard input when interactive,
// and uses the token or client certificate it prints until its
// expirationTimestamp; it runs again once they expire and after a 401. One
// difference from client-go: the request answered 401 is sent once more
// with the refreshed credentials (client-go returns the 401 and only the
// next request uses them). A failure to get credentials is returned at
// once, never retried.
//
// # Several API servers
//
// Config.Hosts lists other API servers of the same cluster (replicas on
// one etcd, sharing the CA and credentials); a kubeconfig cluster's
// FailoverExtension fills it, which setpoint writes when its API servers
// share a --pki-dir. The client uses one server at a time and moves to the
// next, round robin, when a request gets no HTTP answer (refused, reset,
// dial or TLS failure). The failed request is retried on the next server
// under the retry rules below — at once, without backoff, until every
// server was tried once — so a refused connection is always retried and a
// reset one only for idempotent verbs: a POST or PATCH whose connection
// broke may have been applied and is returned as an error. A watch whose
// stream breaks ends as usual; the informer's next list and watch go to
// the next server.
//
// # Accessors
//
// For[T, L](client, gvr, namespaced) returns a *Resource for one resource,
// with T the object and L the list type (e.g. *corev1.Pod, *corev1.PodList);
// Dynamic returns the same accessor over *unstructured.Unstructured for any
// resource, custom ones included. The client's scheme (NewScheme, every
// kind of k8s.io/api; NewWithScheme takes yours, with your own types added
// by their AddToScheme) names the kind sent for objects without
// apiVersion and kind, and decodes answers; it is the one scheme of a
// manager, its informers and its Client. Namespace(ns) binds a namespace; on an
// unbound namespaced Resource, List and Watch span all namespaces. Options
// are the standard metav1 option structs, sent as query parameters (or, for
// deletes, as a DeleteOptions body). A Resource speaks JSON unless
// Config.ContentType asks for protobuf; PreferProtobuf makes one speak
// protobuf for a built-in kind when ContentType was left unset, as
// client-go's generated clients do (package informer uses it).
//
// # Errors
//
// A non-2xx answer is returned as *apierrors.StatusError: the server's own
// Status when the body is one, else a generic error for the status code. So
// apierrors.IsNotFound, IsConflict, IsAlreadyExists, IsGone and friends work
// on every error the accessors return (through wrapping, with errors.As).
//
// # Watch
//
// Watch returns a watch.Interface. Each event's Object is a T (or a
// *metav1.Status for watch.Error, which is how the server reports, for
// example, a resourceVersion too old: apierrors.FromObject turns it into an
// error for which IsGone / IsResourceExpired hold). A BOOKMARK carries a T
// holding only its resourceVersion (and annotations). The result channel is
// closed when the server ends the stream, when the context passed to Watch
// ends, or by Stop, which returns only once the stream is closed and the
// channel too; a decode failure is delivered as one watch.Error
// event before the close. Consumers must drain or Stop the watch: the
// decoding goroutine blocks on an unread channel until one of those.
//
// # Retries and limits
//
// Every request waits on the client's token bucket before each attempt:
// Config.QPS and Burst, by default client-go's DefaultQPS 5 and
// DefaultBurst 10 (a plain client, as kubectl-like tools use; managers set
// controller-runtime's 20/30, setpoint's components their own, package
// manager and internal/controllermanager); a negative QPS turns it off.
// It then may be retried up to
// Config.MaxRetries times (default 10) with exponential backoff from 100ms
// to 10s. Which failures are retried is chosen to be safe, like client-go:
// a 429 or 5xx with Retry-After (waiting at least that long) and a 429
// without it for every verb, since the server did not act; other 5xx and
// transport errors only for idempotent verbs (GET, HEAD, PUT, DELETE),
// except a refused connection, which is retried for every verb because
// nothing was sent. Config.Timeout bounds a whole non-watch call including
// its retries; cancellation of the caller's context stops any call at once.
// Time is read from Config.Clock, so tests drive backoff and rate limiting
// with a fake clock.
//
// # Metrics
//
// With Config.Metrics (NewMetrics, one per Prometheus registry; a manager
// sets its own) the client exports client-go's series:
// rest_client_requests_total{code,method,host}, one per attempt (code the
// HTTP status, "<error>" without an answer), and
// rest_client_request_duration_seconds{verb,host} (verb the HTTP method),
// one per call from its start, rate-limiter waits and retries included, in
// client-go's buckets 5 ms … 60 s.
package rest
