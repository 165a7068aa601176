package pki

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestLoadSharedConcurrently: eight servers starting together on one empty
// directory end up with one CA and one admin token, and each serving
// certificate it signs verifies against the CA the others loaded.
func TestLoadSharedConcurrently(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki-shared")
	const n = 8
	cas := make([]*CA, n)
	admins := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ca, _, admin, err := LoadShared(dir)
			if err != nil {
				t.Error(err)
				return
			}
			cas[i], admins[i] = ca, admin
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i := 1; i < n; i++ {
		if !bytes.Equal(cas[i].CertPEM, cas[0].CertPEM) || admins[i] != admins[0] {
			t.Fatalf("server %d loaded another CA or token than server 0", i)
		}
	}
	cert, err := cas[3].EnsureServing(t.TempDir(), []string{"10.0.0.7"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Leaf.Verify(x509VerifyOptions(cas[5])); err != nil {
		t.Fatalf("serving certificate of one server does not verify against another's CA: %v", err)
	}
}

// TestRegisterServerKubeconfig: registering servers keeps them in order,
// once each, and the shared kubeconfig names every one: the current context
// is the last registered, each other server has its own context with the
// same user, and every cluster lists the others in the failover extension.
func TestRegisterServerKubeconfig(t *testing.T) {
	dir := t.TempDir()
	ca, _, admin, err := LoadShared(dir)
	if err != nil {
		t.Fatal(err)
	}
	urls := []string{"https://10.0.0.1:6443", "https://10.0.0.2:6443", "https://10.0.0.1:6443", "https://10.0.0.3:6443"}
	var got []string
	for _, u := range urls {
		if got, err = RegisterServer(dir, u, ca.CertPEM, admin); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"https://10.0.0.1:6443", "https://10.0.0.2:6443", "https://10.0.0.3:6443"}
	if !slices.Equal(got, want) {
		t.Fatalf("servers %v, want %v", got, want)
	}
	data, err := os.ReadFile(filepath.Join(dir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(data, &kc); err != nil {
		t.Fatal(err)
	}
	if kc.CurrentContext != "setpoint" || len(kc.Clusters) != 3 || len(kc.Contexts) != 3 || len(kc.Users) != 1 {
		t.Fatalf("kubeconfig shape: %s", data)
	}
	servers := map[string]string{}
	for _, c := range kc.Clusters {
		servers[c.Name] = c.Cluster.Server
		if !bytes.Equal(c.Cluster.CertificateAuthorityData, ca.CertPEM) {
			t.Fatalf("cluster %s has another CA", c.Name)
		}
		if len(c.Cluster.Extensions) != 1 || c.Cluster.Extensions[0].Name != FailoverExtension {
			t.Fatalf("cluster %s extensions %+v", c.Name, c.Cluster.Extensions)
		}
		others := slices.DeleteFunc(slices.Clone(want), func(s string) bool { return s == c.Cluster.Server })
		if fo := slices.Sorted(slices.Values(c.Cluster.Extensions[0].Extension.Servers)); !slices.Equal(fo, others) {
			t.Fatalf("cluster %s fails over to %v, want %v", c.Name, c.Cluster.Extensions[0].Extension.Servers, others)
		}
	}
	wantServers := map[string]string{"setpoint": want[2], "setpoint-10.0.0.1:6443": want[0], "setpoint-10.0.0.2:6443": want[1]}
	if fmt.Sprint(servers) != fmt.Sprint(wantServers) {
		t.Fatalf("clusters %v, want %v", servers, wantServers)
	}
	for _, x := range kc.Contexts {
		if x.Context.User != "setpoint-admin" || x.Context.Cluster != x.Name {
			t.Fatalf("context %+v", x)
		}
	}
}

func x509VerifyOptions(ca *CA) x509.VerifyOptions {
	return x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
}
