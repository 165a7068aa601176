package aggregator_test

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

// eventually retries check until it returns "" (10 s), failing with its
// last complaint.
func eventually(t *testing.T, check func() string) {
	t.Helper()
	testwait.UntilEvery(t, 10*time.Second, 100*time.Millisecond, "published", testwait.Reason(check))
}

// TestDiscoveryAndOpenAPI: the aggregated group is listed in /apis (both
// forms) and /apis/<group>, with the resources the backend describes, and
// its OpenAPI documents are merged.
func TestDiscoveryAndOpenAPI(t *testing.T) {
	t.Parallel()
	fp := frontProxy(t)
	ts := startServer(t, fp)
	be := startBackend(t, fp.CAFile)
	setupService(t, ts, hostIP(t), be.port, true)
	createAPIService(t, ts, be.caPEM)
	waitCondition(t, ts, apiregv1.ConditionTrue, "Passed")
	eventually(t, func() string {
		var list apidiscoveryv2.APIGroupDiscoveryList
		if err := getJSON(t, ts, "/apis", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", &list); err != "" {
			return err
		}
		i := slices.IndexFunc(list.Items, func(g apidiscoveryv2.APIGroupDiscovery) bool { return g.Name == group })
		if i < 0 {
			return "aggregated /apis lacks " + group
		}
		v := list.Items[i].Versions[0]
		if v.Version != version || v.Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent || len(v.Resources) != 1 ||
			v.Resources[0].Resource != "flunders" || v.Resources[0].Scope != apidiscoveryv2.ScopeNamespace ||
			len(v.Resources[0].Subresources) != 1 || v.Resources[0].Subresources[0].Subresource != "status" {
			b, _ := json.Marshal(v)
			return "aggregated entry " + string(b)
		}
		return ""
	})
	var groups metav1.APIGroupList
	if err := getJSON(t, ts, "/apis", "application/json", &groups); err != "" {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(groups.Groups, func(g metav1.APIGroup) bool { return g.Name == group }); i < 0 ||
		groups.Groups[i].PreferredVersion.GroupVersion != group+"/"+version {
		t.Errorf("/apis lacks %s: %+v", group, groups.Groups)
	}
	var g metav1.APIGroup
	if err := getJSON(t, ts, "/apis/"+group, "application/json", &g); err != "" || g.Name != group || len(g.Versions) != 1 {
		t.Errorf("/apis/%s: %+v %s", group, g, err)
	}
	var rl metav1.APIResourceList
	if err := getJSON(t, ts, "/apis/"+group+"/"+version, "application/json", &rl); err != "" || len(rl.APIResources) != 2 {
		t.Errorf("/apis/%s/%s (the backend's): %+v %s", group, version, rl, err)
	}

	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := getJSON(t, ts, "/openapi/v3", "application/json", &index); err != "" {
		t.Fatal(err)
	}
	e, ok := index.Paths["apis/"+group+"/"+version]
	if !ok || !strings.HasPrefix(e.ServerRelativeURL, "/openapi/v3/apis/"+group+"/"+version+"?hash=") {
		t.Fatalf("/openapi/v3 entry %+v", e)
	}
	if code, b, _ := ts.Do(t, "GET", e.ServerRelativeURL, "", nil); code != http.StatusOK || string(b) != openAPIV3 {
		t.Errorf("v3 document: %d %s", code, b)
	}
	// The backend goes away: the group stays listed, Stale, as
	// kube-aggregator lists it.
	be.srv.CloseClientConnections()
	be.srv.Close()
	waitCondition(t, ts, apiregv1.ConditionFalse, "FailedDiscoveryCheck")
	eventually(t, func() string {
		var list apidiscoveryv2.APIGroupDiscoveryList
		if err := getJSON(t, ts, "/apis", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", &list); err != "" {
			return err
		}
		i := slices.IndexFunc(list.Items, func(g apidiscoveryv2.APIGroupDiscovery) bool { return g.Name == group })
		if i < 0 || list.Items[i].Versions[0].Freshness != apidiscoveryv2.DiscoveryFreshnessStale {
			return "the unavailable group is not listed Stale"
		}
		return ""
	})

	// Deleted: gone from discovery, and its paths are no longer served.
	mustDo(t, ts, "DELETE", "/apis/apiregistration.k8s.io/v1/apiservices/"+version+"."+group, "", http.StatusOK)
	eventually(t, func() string {
		var groups metav1.APIGroupList
		if err := getJSON(t, ts, "/apis", "application/json", &groups); err != "" {
			return err
		}
		if slices.ContainsFunc(groups.Groups, func(g metav1.APIGroup) bool { return g.Name == group }) {
			return "the deleted APIService's group is still listed"
		}
		return ""
	})
	if code, _, _ := ts.Do(t, "GET", "/apis/"+group+"/"+version+"/flunders", "", nil); code != http.StatusNotFound {
		t.Errorf("deleted group-version: %d, want 404", code)
	}
}

func getJSON(t *testing.T, ts *testserver.Server, path, accept string, into any) string {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+ts.Token)
	req.Header.Set("Accept", accept)
	resp, err := ts.Client.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return path + ": " + resp.Status
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		return path + ": " + err.Error()
	}
	return ""
}

// TestRequestHeader: the server authenticates a front proxy's requests as
// the user its headers name, publishes the settings in
// kube-system/extension-apiserver-authentication, and does not take the
// front-proxy certificate for a user of its own.
func TestRequestHeader(t *testing.T) {
	t.Parallel()
	fp := frontProxy(t)
	ts := startServer(t, fp)
	var cm corev1.ConfigMap
	if err := getJSON(t, ts, "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication", "application/json", &cm); err != "" {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(fp.CAFile)
	want := map[string]string{
		"requestheader-client-ca-file":       string(caPEM),
		"requestheader-allowed-names":        `["front-proxy-client"]`,
		"requestheader-username-headers":     `["X-Remote-User"]`,
		"requestheader-group-headers":        `["X-Remote-Group"]`,
		"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
		"client-ca-file":                     string(ts.API.CA().CertPEM),
	}
	for k, v := range want {
		if cm.Data[k] != v {
			t.Errorf("%s = %q, want %q", k, cm.Data[k], v)
		}
	}

	cert, err := tls.LoadX509KeyPair(fp.ClientCertFile, fp.ClientKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: ts.API.CA().Pool(), Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}}
	review := func(headers map[string][]string) (int, authnv1.UserInfo) {
		req, _ := http.NewRequest("POST", ts.URL+"/apis/authentication.k8s.io/v1/selfsubjectreviews",
			strings.NewReader(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`))
		req.Header.Set("Content-Type", "application/json")
		for k, vs := range headers {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r authnv1.SelfSubjectReview
		_ = json.NewDecoder(resp.Body).Decode(&r)
		return resp.StatusCode, r.Status.UserInfo
	}
	code, u := review(map[string][]string{"X-Remote-User": {"alice"}, "X-Remote-Group": {"devs", "ops"}, "X-Remote-Extra-Scopes": {"a", "b"}, "X-Remote-Extra-Team%2fName": {"x"}})
	if code != http.StatusCreated || u.Username != "alice" || !slices.Equal(u.Groups, []string{"devs", "ops", "system:authenticated"}) ||
		!slices.Equal(u.Extra["scopes"], authnv1.ExtraValue{"a", "b"}) || !slices.Equal(u.Extra["team/name"], authnv1.ExtraValue{"x"}) {
		t.Errorf("front-proxy request: %d %+v", code, u)
	}
	// Without a username header the certificate is nobody.
	if code, _ := review(nil); code != http.StatusUnauthorized {
		t.Errorf("front-proxy certificate without headers: %d, want 401", code)
	}
}
