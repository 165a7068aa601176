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
//	tokens.csv                      static tokens: token,user,uid,"group1,group2"
//	kubeconfig                      admin kubeconfig (token auth, CA data)
package pki
