package main

import (
	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/controlplane"
	"github.com/setpoint-dev/setpoint/internal/pki"
)

// withFrontProxy sets up aggregation as kubeadm does when the flags do not
// name credentials of their own: the front-proxy CA and client
// certificate in the data directory (or the shared --pki-dir), the
// requestheader settings trusting that CA for front-proxy-client, and the
// client certificate presented to aggregated API servers.
func withFrontProxy(api *controlplane.Options) error {
	if api.RequestHeader.ClientCAFile != "" || api.ProxyClientCertFile != "" {
		return nil
	}
	dir := api.DataDir
	if api.PKIDir != "" {
		dir = api.PKIDir
	}
	fp, err := pki.EnsureFrontProxy(dir)
	if err != nil {
		return err
	}
	// Each list given on the command line wins over kubeadm's.
	def, rh := apiserver.DefaultRequestHeaderConfig(fp.CAFile, pki.FrontProxyClientUser), &api.RequestHeader
	rh.ClientCAFile = fp.CAFile
	for _, l := range []struct {
		have *[]string
		def  []string
	}{
		{&rh.AllowedNames, def.AllowedNames}, {&rh.UsernameHeaders, def.UsernameHeaders},
		{&rh.GroupHeaders, def.GroupHeaders}, {&rh.ExtraHeaderPrefixes, def.ExtraHeaderPrefixes},
	} {
		if len(*l.have) == 0 {
			*l.have = l.def
		}
	}
	api.ProxyClientCertFile, api.ProxyClientKeyFile = fp.ClientCertFile, fp.ClientKeyFile
	return nil
}
