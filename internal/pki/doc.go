// Package pki creates and loads the server's credentials in its data
// directory: a self-signed CA, a serving certificate signed by it, the
// static bearer tokens, and the admin kubeconfig.
//
// Everything is created on first start and reused afterwards, so a restart
// on the same directory keeps serving the same CA and tokens (clients'
// kubeconfigs stay valid). Private keys and the token file are written with
// mode 0600. Files are written to a temporary name and renamed, so a crash
// never leaves a half-written credential.
//
// Layout of the data directory:
//
//	pki/ca.crt, pki/ca.key          the cluster CA (ECDSA P-256, 10 years)
//	pki/serving.crt, serving.key    the API server's certificate (1 year),
//	                                reissued when its hosts change or it
//	                                expires within 30 days
//	pki/front-proxy-ca.{crt,key}    the front-proxy CA (EnsureFrontProxy): a CA
//	                                of its own, trusted by aggregated API
//	                                servers for X-Remote-* requests
//	pki/front-proxy-client.{crt,key} its client certificate (CN
//	                                front-proxy-client), presented when the
//	                                API server proxies to them
//	tokens.csv                      static tokens: token,user,uid,"group1,group2"
//	kubeconfig                      admin kubeconfig (token auth, CA data)
//
// # Shared credentials
//
// Several API servers of one cluster (on one etcd) share a credentials
// directory (apiserver.Config.PKIDir) in the same layout, holding
// pki/ca.{crt,key} and tokens.csv, plus:
//
//	servers                         every server's https URL, one a line
//	kubeconfig                      admin kubeconfig naming all of them
//
// LoadShared creates the CA and tokens under an exclusive flock on
// dir/.lock, so servers starting together agree on one CA and one token
// set; RegisterServer appends a server's URL and rewrites the kubeconfig
// under the same lock. Each server keeps its serving certificate in its own
// data directory, signed by the shared CA for its own addresses. A
// kubeconfig with several servers has one cluster and context per server
// (same CA, same user); each cluster carries the FailoverExtension listing
// the others, which kubectl ignores and setpoint's rest client uses to fail
// over.
package pki
