// Package webhookclient is the one client every webhook caller of the API
// server uses: the admission webhooks (ValidatingAdmissionWebhook,
// MutatingAdmissionWebhook), the CRD conversion webhooks, and, for its
// Service-to-endpoint resolution, the aggregator.
//
// # The contract
//
// A webhook is named by a ClientConfig, the shape admissionregistration/v1
// and apiextensions/v1 WebhookClientConfig share (FromAdmission,
// FromConversion): a URL, or a Service reference {namespace, name, path,
// port (default 443)}, and a caBundle.
//
//	c := webhookclient.New(webhookclient.Options{})
//	body, err := c.Post(ctx, cfg, webhookclient.Request{
//		Body: review, Timeout: 10 * time.Second, Resolver: webhookclient.EnvResolver(env),
//	})
//	err = c.Call(ctx, cfg, req, codec, in, out) // encode in, Post, decode into out
//
// Client keeps one TLS transport per (caBundle, server name), so calls to a
// webhook reuse their connections; the transports speak HTTP/1.1, as
// kube-apiserver's webhook client does. An empty caBundle trusts the
// system roots. A URL is called as it is written, its path cleaned, with
// `?timeout=<Request.Timeout>` appended as kube's REST client appends it. A
// Service reference is called as https://<name>.<namespace>.svc:<port>
// and its certificate is verified against <name>.<namespace>.svc; the
// connection itself goes to one of the Service's ready endpoints, chosen
// at random, as kube-apiserver does with --enable-aggregator-routing=true:
// Resolver.ResolveEndpoint finds them. EnvResolver reads the Service and
// its EndpointSlices (label kubernetes.io/service-name; ready or
// readiness unknown), or its Endpoints when it has no slice, from the
// server's watch caches, so a webhook served by a process on the host is
// registered by a Service without selector plus an EndpointSlice (or
// Endpoints) pointing at the host. (Their validation, kube's, refuses
// 127.0.0.0/8: the endpoint is a non-loopback address of the host; a URL
// client config may name 127.0.0.1.) ResolveService is that resolution
// over objects already read, for callers with their own caches.
//
// Package webhooktest (tests only) runs real HTTPS webhook servers on
// loopback or on the host's address, with a CA of their own.
//
// # Errors, worded as kube-apiserver's
//
//   - A client that cannot be built (a caBundle that is no PEM, a URL that
//     does not parse, a config with neither URL nor service) is a
//     *ConfigError; its message is client-go's (`unable to load root
//     certificates: unable to parse bytes as PEM block`). Admission words it
//     `could not get REST client: …`.
//   - A call that does not get an answer is Go's *url.Error, as kube's:
//     `Post "https://127.0.0.1:8443/validate?timeout=10s": context deadline
//     exceeded`, `…: tls: failed to verify certificate: x509: certificate
//     signed by unknown authority`; a Service reference that does not
//     resolve fails the dial with the resolver's error: `service "x" not
//     found`, `no service port 8443 found for service "x"`, `no endpoints
//     available for service "x"` (503s), `unsupported service type
//     "ExternalName"`.
//   - An answer with a status outside 200–206 is an *apierrors.StatusError
//     as kube's REST client makes it: the Status in the body when the body
//     is one, else apierrors.NewGenericServerResponse with the body (first
//     2 KiB, trimmed) as the server message when it is text/*, "unknown"
//     otherwise (`an error on the server ("boom") has prevented the request
//     from succeeding`).
//   - Call decodes with a codec of NewCodec (apimachinery's, as kube's
//     webhook client), so a garbage answer fails with its error
//     (`couldn't get version/kind; json parse error: …`), an empty one with
//     `0-length response with status code: 200 and content type: …`.
//
// The caller wraps these as its protocol does (admission:
// `failed calling webhook "x": failed to call webhook: <err>`).
//
// Client is safe for concurrent use; Close drops idle connections. The
// package keeps no global state.
package webhookclient
