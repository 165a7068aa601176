package core_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const podsPath = "/api/v1/namespaces/default/pods"

// The expected answers are kube-apiserver v1.37.2's to the same requests.

func TestPodConnectDiscovery(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	var list metav1.APIResourceList
	if err := json.Unmarshal([]byte(mustSend(t, s, http.MethodGet, "/api/v1", "", "", 200)), &list); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var podSubs []string
	for _, r := range list.APIResources {
		got[r.Name] = r.Kind + " " + strings.Join(r.Verbs, ",")
		if strings.HasPrefix(r.Name, "pods/") {
			podSubs = append(podSubs, r.Name)
		}
		if r.Name == "pods/eviction" && (r.Group != "policy" || r.Version != "v1") {
			t.Errorf("pods/eviction: group %q version %q, want policy v1", r.Group, r.Version)
		}
	}
	// kube-apiserver v1.37.2 lists these, in this order.
	want := "pods/attach pods/binding pods/ephemeralcontainers pods/eviction pods/exec pods/log pods/portforward pods/proxy pods/resize pods/status"
	if strings.Join(podSubs, " ") != want {
		t.Errorf("pods subresources %v, want %s", podSubs, want)
	}
	for name, want := range map[string]string{
		"pods/attach":              "PodAttachOptions create,get",
		"pods/binding":             "Binding create",
		"pods/ephemeralcontainers": "Pod get,patch,update",
		"pods/eviction":            "Eviction create",
		"pods/resize":              "Pod get,patch,update",
		"pods/status":              "Pod get,patch,update",
		"pods/exec":                "PodExecOptions create,get",
		"pods/log":                 "Pod get",
		"pods/portforward":         "PodPortForwardOptions create,get",
		"pods/proxy":               "PodProxyOptions create,delete,get,patch,update",
		"nodes/proxy":              "NodeProxyOptions create,delete,get,patch,update",
		"services/proxy":           "ServiceProxyOptions create,delete,get,patch,update",
	} {
		if got[name] != want {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
}

// podCluster is a server with a fake kubelet behind node "n1" (at
// 127.0.0.1) and pods: "one" (container a, port 8080) and "two" (init
// container init1, containers a and b) on n1, "unbound" on no node,
// "ghost" on a node that does not exist, "noaddr" on a node without
// addresses.
func podCluster(t *testing.T) (*testserver.Server, *kubeletFake) {
	t.Helper()
	s := testserver.Start(t, testserver.Options{})
	k := startKubelet(t, "127.0.0.1")
	mustSend(t, s, http.MethodPost, "/api/v1/nodes", "application/json", nodeJSON("n1", k.port(), "InternalIP=127.0.0.1"), 201)
	mustSend(t, s, http.MethodPost, "/api/v1/nodes", "application/json", nodeJSON("noaddr", "0"), 201)
	for name, spec := range map[string]string{
		"one":     `"nodeName":"n1","containers":[{"name":"a","image":"busybox","ports":[{"containerPort":8080}]}]`,
		"two":     `"nodeName":"n1","initContainers":[{"name":"init1","image":"busybox"}],"containers":[{"name":"a","image":"busybox"},{"name":"b","image":"busybox"}]`,
		"unbound": `"containers":[{"name":"a","image":"busybox"}]`,
		"ghost":   `"nodeName":"ghost-node","containers":[{"name":"a","image":"busybox"}]`,
		"noaddr":  `"nodeName":"noaddr","containers":[{"name":"a","image":"busybox"}]`,
	} {
		mustSend(t, s, http.MethodPost, podsPath, "application/json",
			fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q},"spec":{%s}}`, name, spec), 201)
	}
	return s, k
}

func TestPodLog(t *testing.T) {
	s, k := podCluster(t)
	t.Run("reaches the kubelet with the options as the kubelet takes them", func(t *testing.T) {
		code, body := send(t, s, http.MethodGet, podsPath+"/one/log?follow=true&previous=1&timestamps=true&sinceSeconds=10&tailLines=3&limitBytes=5&insecureSkipTLSVerifyBackend=true", "", "")
		want := "log of /containerLogs/default/one/a?follow=true&limitBytes=5&previous=true&sinceSeconds=10&tailLines=3&timestamps=true\n"
		if code != 200 || body != want {
			t.Errorf("%d %q, want %q", code, body, want)
		}
		r := k.last(t)
		if len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != "kube-apiserver-kubelet-client" {
			t.Errorf("the kubelet saw no API server client certificate: %+v", r.TLS.PeerCertificates)
		}
		if r.Header.Get("Authorization") != "" {
			t.Error("the client's credentials reached the kubelet")
		}
		code, body = send(t, s, http.MethodGet, podsPath+"/one/log?sinceTime=2026-01-02T03:04:05Z", "", "")
		if want := "log of /containerLogs/default/one/a?sinceTime=2026-01-02T03%3A04%3A05Z\n"; code != 200 || body != want {
			t.Errorf("sinceTime: %d %q", code, body)
		}
	})
	t.Run("a named container of any kind", func(t *testing.T) {
		code, body := send(t, s, http.MethodGet, podsPath+"/two/log?container=init1", "", "")
		if code != 200 || body != "log of /containerLogs/default/two/init1?\n" {
			t.Errorf("%d %q", code, body)
		}
	})
	t.Run("container and pod errors", func(t *testing.T) {
		for _, c := range []struct {
			path, reason, msg string
			code              int
		}{
			{"/two/log", "BadRequest", "a container name must be specified for pod two, choose one of: [init1 a b]", 400},
			{"/two/log?container=zz", "BadRequest", "container zz is not valid for pod two", 400},
			{"/missing/log", "NotFound", `pods "missing" not found`, 404},
			{"/ghost/log", "NotFound", `pods "ghost-node" not found`, 404},
			{"/noaddr/log", "", "no preferred addresses found; known addresses: []", 500},
			{"/one/logs", "NotFound", "the server could not find the requested resource", 404},
			{"/missing/logs", "NotFound", "the server could not find the requested resource", 404},
		} {
			code, body := send(t, s, http.MethodGet, podsPath+c.path, "", "")
			expectStatus(t, c.path, code, body, c.code, c.reason, c.msg)
		}
	})
	t.Run("a pod on no node has an empty log", func(t *testing.T) {
		if code, body := send(t, s, http.MethodGet, podsPath+"/unbound/log", "", ""); code != 204 || body != "" {
			t.Errorf("%d %q", code, body)
		}
	})
	t.Run("option ranges", func(t *testing.T) {
		for _, c := range []struct{ query, field, reason, msg string }{
			{"tailLines=-1", "tailLines", "FieldValueInvalid", `PodLogOptions "one" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0`},
			{"limitBytes=0", "limitBytes", "FieldValueInvalid", `PodLogOptions "one" is invalid: limitBytes: Invalid value: 0: must be greater than 0`},
			{"sinceSeconds=0", "sinceSeconds", "FieldValueInvalid", `PodLogOptions "one" is invalid: sinceSeconds: Invalid value: 0: must be greater than 0`},
			{"sinceSeconds=1&sinceTime=2020-01-01T00:00:00Z", "[]", "FieldValueForbidden", "PodLogOptions \"one\" is invalid: []: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"},
			{"stream=Stdout", "stream", "FieldValueForbidden", `PodLogOptions "one" is invalid: stream: Forbidden: may not be specified`},
		} {
			code, body := send(t, s, http.MethodGet, podsPath+"/one/log?"+c.query, "", "")
			st := expectStatus(t, c.query, code, body, 422, "Invalid", c.msg)
			if st.Details.Kind != "PodLogOptions" || st.Details.Name != "one" || len(st.Details.Causes) != 1 ||
				st.Details.Causes[0].Field != c.field || st.Details.Causes[0].Reason != c.reason {
				t.Errorf("%s: details %+v", c.query, st.Details)
			}
		}
		code, body := send(t, s, http.MethodGet, podsPath+"/one/log?tailLines=abc", "", "")
		expectStatus(t, "tailLines=abc", code, body, 400, "BadRequest", `strconv.ParseInt: parsing "abc": invalid syntax`)
	})
	t.Run("the Hostname address is preferred", func(t *testing.T) {
		mustSend(t, s, http.MethodPost, "/api/v1/nodes", "application/json", nodeJSON("n2", k.port(), "InternalIP=10.255.255.1", "Hostname=127.0.0.1"), 201)
		mustSend(t, s, http.MethodPost, podsPath, "application/json",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"on-n2"},"spec":{"nodeName":"n2","containers":[{"name":"c","image":"busybox"}]}}`, 201)
		if code, body := send(t, s, http.MethodGet, podsPath+"/on-n2/log", "", ""); code != 200 || body != "log of /containerLogs/default/on-n2/c?\n" {
			t.Errorf("%d %q", code, body)
		}
	})
	t.Run("a kubelet that cannot be reached", func(t *testing.T) {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := ln.Addr().String()
		ln.Close()
		_, port, _ := net.SplitHostPort(addr)
		mustSend(t, s, http.MethodPost, "/api/v1/nodes", "application/json", nodeJSON("down", port, "InternalIP=127.0.0.1"), 201)
		mustSend(t, s, http.MethodPost, podsPath, "application/json",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"on-down"},"spec":{"nodeName":"down","containers":[{"name":"c","image":"busybox"}]}}`, 201)
		code, body := send(t, s, http.MethodGet, podsPath+"/on-down/log", "", "")
		expectStatus(t, "down", code, body, 500, "",
			fmt.Sprintf(`Get "https://%s/containerLogs/default/on-down/c": dial tcp %s: connect: connection refused`, addr, addr))
	})
}

func TestPodExecAttachPortForward(t *testing.T) {
	s, k := podCluster(t)
	refused := `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"refused","reason":"BadRequest","code":400}`
	for _, c := range []struct{ path, kubelet string }{
		{"/one/exec?command=ls&command=-l&stdin=true&stdout=1&stderr=true&tty=true", "/exec/default/one/a?command=ls&command=-l&error=1&input=1&output=1&tty=1"},
		{"/two/exec?container=b&command=sh&stdout=true", "/exec/default/two/b?command=sh&output=1"},
		{"/one/attach?stdin=true&stdout=true&tty=true", "/attach/default/one/a?input=1&output=1&tty=1"},
		{"/one/portforward?ports=80&ports=8080", "/portForward/default/one?port=80%2C8080"},
	} {
		code, body := upgrade(t, s, podsPath+c.path)
		if code != 400 || body != refused {
			t.Errorf("%s: %d %s, want the kubelet's refusal", c.path, code, body)
		}
		if r := k.last(t); r.URL.RequestURI() != c.kubelet || r.Header.Get("Upgrade") != "SPDY/3.1" {
			t.Errorf("%s: the kubelet saw %s (upgrade %q), want %s", c.path, r.URL.RequestURI(), r.Header.Get("Upgrade"), c.kubelet)
		}
	}
	for _, c := range []struct {
		method, path, reason, msg string
		code                      int
	}{
		{"POST", "/one/exec?command=ls", "BadRequest", "Upgrade request required", 400},
		{"GET", "/one/attach", "BadRequest", "Upgrade request required", 400},
		{"POST", "/one/portforward?ports=80", "BadRequest", "Upgrade request required", 400},
		{"POST", "/two/exec?command=ls", "BadRequest", "a container name must be specified for pod two, choose one of: [init1 a b]", 400},
		{"POST", "/one/exec?command=ls&container=zz", "BadRequest", "container zz is not valid for pod one", 400},
		{"POST", "/unbound/exec?command=ls", "BadRequest", "pod unbound does not have a host assigned", 400},
		{"POST", "/unbound/portforward", "BadRequest", "pod unbound does not have a host assigned", 400},
		{"POST", "/missing/exec?command=ls", "NotFound", `pods "missing" not found`, 404},
		{"POST", "/ghost/attach", "NotFound", `pods "ghost-node" not found`, 404},
		{"PUT", "/one/exec?command=ls", "MethodNotAllowed", "the server does not allow this method on the requested resource", 405},
		{"POST", "/one/portforward?ports=abc", "BadRequest", `cannot convert to []int32: strconv.ParseUint: parsing "abc": invalid syntax`, 400},
		{"POST", "/one/portforward?ports=70000", "BadRequest", `cannot convert to []int32: strconv.ParseUint: parsing "70000": value out of range`, 400},
	} {
		code, body := send(t, s, c.method, podsPath+c.path, "", "")
		expectStatus(t, c.method+" "+c.path, code, body, c.code, c.reason, c.msg)
	}
}
