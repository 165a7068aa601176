// Package testenv starts a real setpoint control plane inside a Go test or
// program, as controller-runtime's envtest starts kube-apiserver and etcd,
// but in-process and in milliseconds, with nothing to download.
//
// A zero Options gives what envtest gives: an API server alone, over HTTPS
// on a free loopback port, on the durable store in a temporary directory.
// Options.Controllers adds the controller manager (ReplicaSets,
// Deployments, garbage collection, namespaces, node lifecycle) and the
// scheduler; Options.Nodes adds simulated nodes that run the scheduled pods,
// so Deployments become available as on a real cluster.
//
// Calling protocol: Start returns once the environment is ready (the API
// server answers; controllers lead; nodes are Ready). Reach it with Config
// (setpoint's rest client) or Kubeconfig (any client: client-go's
// clientcmd, controller-runtime, kubectl). Restart stops the control plane
// and starts it again on the same data and address, as a server restart
// would look to clients. Stop ends it and removes a directory it created.
// An Environment is not safe for concurrent Restart/Stop calls.
//
//	env, err := testenv.Start(testenv.Options{Controllers: true, Nodes: 2})
//	if err != nil { ... }
//	defer env.Stop()
//	cfg, err := clientcmd.BuildConfigFromFlags("", env.Kubeconfig) // client-go
//
// In a Go test, StartT does the same and stops the environment when the
// test ends; RunManager runs an operator's manager until then (stopping it
// first), failing the test if it cannot start, and prints its LogBuffer
// when the test failed:
//
//	env := testenv.StartT(t, testenv.Options{Controllers: true})
//	logs := &testenv.LogBuffer{}
//	mgr, _ := manager.New(manager.Options{Config: env.Config, Logger: slog.New(slog.NewTextHandler(logs, nil))})
//	_ = myoperator.Add(mgr, myoperator.Options{})
//	testenv.RunManager(t, mgr, logs)
//
// # Webhooks
//
// Options.Webhooks runs admission webhooks as envtest does: Start issues a
// serving certificate from the environment's CA for a local address
// (127.0.0.1 and a free port by default) into a directory, and installs the
// MutatingWebhookConfigurations and ValidatingWebhookConfigurations given
// (Go objects, or manifest files such as kubebuilder's config/webhook),
// each webhook's clientConfig rewritten to https://ADDR/PATH (the path of
// its service or url) with the CA as caBundle. Environment.Webhooks tells
// the test where to serve; ServerOptions gives the webhook server options
// that serve there. WaitForWebhooks returns once the server answers and
// the API server calls the configurations:
//
//	env := testenv.StartT(t, testenv.Options{Webhooks: &testenv.WebhookOptions{Paths: []string{"config/webhook"}}})
//	mgr, _ := manager.New(manager.Options{Config: env.Config, Webhook: env.Webhooks.ServerOptions()})
//	_ = builder.WebhookManagedBy[*v1.Greeting](mgr).WithDefaulter(d).WithValidator(v).Complete()
//	testenv.RunManager(t, mgr, nil)
//	err := env.WaitForWebhooks(ctx)
package testenv
