package apiserver_test

import (
	"slices"
	"strings"
	"testing"
)

type fullObject struct {
	Metadata struct {
		Name                       string   `json:"name"`
		GenerateName               string   `json:"generateName"`
		UID                        string   `json:"uid"`
		ResourceVersion            string   `json:"resourceVersion"`
		Generation                 int64    `json:"generation"`
		CreationTimestamp          string   `json:"creationTimestamp"`
		DeletionTimestamp          *string  `json:"deletionTimestamp"`
		DeletionGracePeriodSeconds *int64   `json:"deletionGracePeriodSeconds"`
		Finalizers                 []string `json:"finalizers"`
	} `json:"metadata"`
	Spec struct {
		Replicas *int32 `json:"replicas"`
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		Replicas   int32  `json:"replicas"`
		Phase      string `json:"phase"`
		Conditions []struct {
			Type, Status string
		} `json:"conditions"`
	} `json:"status"`
	Items []fullObject `json:"items"`
}

func TestObjectLifecycle(t *testing.T) {
	s, _ := start(t, nil)
	var do func(method, path, ctype, body string, want int) fullObject
	bind := func(t *testing.T) {
		do = func(method, path, ctype, body string, want int) fullObject {
			t.Helper()
			code, out, _ := s.Do(t, method, path, ctype, strings.NewReader(body))
			if code != want {
				t.Fatalf("%s %s: %d %s, want %d", method, path, code, out, want)
			}
			if code >= 300 || strings.Contains(string(out), `"kind":"Status"`) {
				return fullObject{}
			}
			return decode[fullObject](t, out)
		}
	}
	const js, merge = "application/json", "application/merge-patch+json"

	t.Run("generateName, uid, creationTimestamp; no generation on a ConfigMap", func(t *testing.T) {
		bind(t)
		o := do("POST", cmPath, js, `{"metadata":{"generateName":"gen-"}}`, 201)
		if !strings.HasPrefix(o.Metadata.Name, "gen-") || len(o.Metadata.Name) != len("gen-")+5 {
			t.Errorf("generated name %q", o.Metadata.Name)
		}
		if o.Metadata.UID == "" || o.Metadata.CreationTimestamp == "" || o.Metadata.Generation != 0 {
			t.Errorf("system metadata %+v", o.Metadata)
		}
	})

	t.Run("dry run writes nothing", func(t *testing.T) {
		bind(t)
		do("POST", cmPath+"?dryRun=All", js, `{"metadata":{"name":"dry"}}`, 201)
		do("GET", cmPath+"/dry", "", "", 404)
	})

	t.Run("generation moves on spec changes only; status and spec are split", func(t *testing.T) {
		bind(t)
		d := do("POST", deployPath, js, deployment("1", "web", "web"), 201)
		if d.Metadata.Generation != 1 {
			t.Fatalf("generation %d", d.Metadata.Generation)
		}
		d = do("PATCH", deployPath+"/d", merge, `{"metadata":{"labels":{"x":"y"}}}`, 200)
		if d.Metadata.Generation != 1 {
			t.Errorf("a label change moved generation to %d", d.Metadata.Generation)
		}
		d = do("PATCH", deployPath+"/d", merge, `{"spec":{"replicas":3},"status":{"replicas":9}}`, 200)
		if d.Metadata.Generation != 2 || *d.Spec.Replicas != 3 || d.Status.Replicas != 0 {
			t.Errorf("spec patch on the main resource: generation %d replicas %d status.replicas %d, want 2, 3, 0",
				d.Metadata.Generation, *d.Spec.Replicas, d.Status.Replicas)
		}
		d = do("PATCH", deployPath+"/d/status", merge, `{"spec":{"replicas":5},"status":{"replicas":3}}`, 200)
		if d.Metadata.Generation != 2 || *d.Spec.Replicas != 3 || d.Status.Replicas != 3 {
			t.Errorf("status patch: generation %d replicas %d status.replicas %d, want 2, 3, 3",
				d.Metadata.Generation, *d.Spec.Replicas, d.Status.Replicas)
		}
		sc := do("GET", deployPath+"/d/scale", "", "", 200)
		if *sc.Spec.Replicas != 3 {
			t.Errorf("scale spec.replicas %d", *sc.Spec.Replicas)
		}
		do("PUT", deployPath+"/d/scale", js, `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d"},"spec":{"replicas":4}}`, 200)
		if d = do("GET", deployPath+"/d", "", "", 200); *d.Spec.Replicas != 4 || d.Metadata.Generation != 3 {
			t.Errorf("after scale: replicas %d generation %d", *d.Spec.Replicas, d.Metadata.Generation)
		}
	})

	t.Run("finalizers hold the object until the last one is removed", func(t *testing.T) {
		bind(t)
		do("POST", cmPath, js, `{"metadata":{"name":"held","finalizers":["example.com/a","example.com/b"]}}`, 201)
		o := do("DELETE", cmPath+"/held", "", "", 200)
		if o.Metadata.DeletionTimestamp == nil {
			t.Fatal("no deletionTimestamp after delete")
		}
		do("PATCH", cmPath+"/held", js+"-patch+json", `[{"op":"remove","path":"/metadata/finalizers/0"}]`, 200)
		if o = do("GET", cmPath+"/held", "", "", 200); !slices.Equal(o.Metadata.Finalizers, []string{"example.com/b"}) {
			t.Errorf("finalizers %v", o.Metadata.Finalizers)
		}
		do("PATCH", cmPath+"/held", merge, `{"metadata":{"finalizers":null}}`, 200)
		do("GET", cmPath+"/held", "", "", 404)
	})

	t.Run("propagationPolicy is recorded for the garbage collector", func(t *testing.T) {
		bind(t)
		for policy, fin := range map[string]string{"Foreground": "foregroundDeletion", "Orphan": "orphan"} {
			name := "p-" + strings.ToLower(policy)
			do("POST", cmPath, js, `{"metadata":{"name":"`+name+`"}}`, 201)
			o := do("DELETE", cmPath+"/"+name, js, `{"propagationPolicy":"`+policy+`"}`, 200)
			if !slices.Contains(o.Metadata.Finalizers, fin) || o.Metadata.DeletionTimestamp == nil {
				t.Errorf("%s: finalizers %v deletionTimestamp %v", policy, o.Metadata.Finalizers, o.Metadata.DeletionTimestamp)
			}
		}
		do("POST", cmPath, js, `{"metadata":{"name":"p-background"}}`, 201)
		do("DELETE", cmPath+"/p-background?propagationPolicy=Background", "", "", 200)
		do("GET", cmPath+"/p-background", "", "", 404)
	})

	t.Run("deletecollection with a label selector", func(t *testing.T) {
		bind(t)
		for _, n := range []string{"dc-1", "dc-2", "dc-keep"} {
			label := "gone"
			if n == "dc-keep" {
				label = "kept"
			}
			do("POST", cmPath, js, `{"metadata":{"name":"`+n+`","labels":{"batch":"`+label+`"}}}`, 201)
		}
		out := do("DELETE", cmPath+"?labelSelector=batch%3Dgone", "", "", 200)
		if len(out.Items) != 2 {
			t.Errorf("deletecollection returned %d items", len(out.Items))
		}
		left := do("GET", cmPath+"?labelSelector=batch", "", "", 200)
		if len(left.Items) != 1 || left.Items[0].Metadata.Name != "dc-keep" {
			t.Errorf("left after deletecollection: %+v", left.Items)
		}
	})

	t.Run("binding, then graceful pod deletion", func(t *testing.T) {
		bind(t)
		const pods = "/api/v1/namespaces/default/pods"
		do("POST", pods, js, `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`, 201)
		do("POST", pods+"/p/binding", js, `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{"kind":"Node","name":"n1"}}`, 201)
		p := do("GET", pods+"/p", "", "", 200)
		if p.Spec.NodeName != "n1" || len(p.Status.Conditions) == 0 || p.Status.Conditions[0].Type != "PodScheduled" {
			t.Errorf("after binding: node %q conditions %+v", p.Spec.NodeName, p.Status.Conditions)
		}
		do("POST", pods+"/p/binding", js, `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{"kind":"Node","name":"n2"}}`, 409)
		p = do("DELETE", pods+"/p", "", "", 200)
		if p.Metadata.DeletionTimestamp == nil || p.Metadata.DeletionGracePeriodSeconds == nil || *p.Metadata.DeletionGracePeriodSeconds != 30 {
			t.Errorf("a bound pod is deleted gracefully (30 s): %+v", p.Metadata)
		}
		do("GET", pods+"/p", "", "", 200)
		do("DELETE", pods+"/p", js, `{"gracePeriodSeconds":0}`, 200)
		do("GET", pods+"/p", "", "", 404)
	})
}
