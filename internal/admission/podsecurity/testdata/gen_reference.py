import json
P = "pod-security.kubernetes.io/"
def ns_path(n): return "/api/v1/namespaces/" + n
def label(n, labels, dry=False, name=None, note=None):
    c = {"name": name, "method": "PATCH", "path": ns_path(n) + ("?dryRun=All" if dry else ""),
         "body": {"metadata": {"labels": labels}}}
    if note: c["note"] = note
    return c
# kubernetes.io/examples/security/example-baseline-pod.yaml
nginx = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nginx"},
         "spec": {"containers": [{"image": "nginx", "name": "nginx", "ports": [{"containerPort": 80}]}]}}
def pod(name, spec): return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}
hostvol = [{"name": "h", "hostPath": {"path": "/var/lib"}}]
def sys_pod(name, extra_sc=None, caps=None):
    c = {"name": "c", "image": "registry.k8s.io/pause:3.10"}
    sc = {}
    if extra_sc: sc.update(extra_sc)
    if caps: sc["capabilities"] = {"add": caps}
    if sc: c["securityContext"] = sc
    return pod(name, {"hostNetwork": True, "volumes": hostvol, "containers": [c]})
coredns = pod("coredns", {"containers": [{"name": "coredns", "image": "registry.k8s.io/coredns/coredns:v1.12.0",
    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]}, "readOnlyRootFilesystem": True}}]})
privileged = pod("priv", {"containers": [{"name": "priv", "image": "nginx", "securityContext": {"privileged": True}}]})
def post(n, obj, name, dry=False, ignore_body=True, note=None):
    kind = obj["kind"]
    coll = {"Pod": "/api/v1/namespaces/%s/pods", "Deployment": "/apis/apps/v1/namespaces/%s/deployments",
            "CronJob": "/apis/batch/v1/namespaces/%s/cronjobs", "Job": "/apis/batch/v1/namespaces/%s/jobs",
            "DaemonSet": "/apis/apps/v1/namespaces/%s/daemonsets", "StatefulSet": "/apis/apps/v1/namespaces/%s/statefulsets",
            "ReplicaSet": "/apis/apps/v1/namespaces/%s/replicasets", "ReplicationController": "/api/v1/namespaces/%s/replicationcontrollers",
            "PodTemplate": "/api/v1/namespaces/%s/podtemplates"}[kind] % n
    c = {"name": name, "method": "POST", "path": coll + ("?dryRun=All" if dry else ""), "body": obj}
    if ignore_body:
        c["ignore"] = ["*"]
        c["note"] = note or "an admitted write: only the code and the warnings are compared (the object is the kind's, and the reference's ServiceAccount admission adds a token volume)"
    return c
def tmpl(spec): return {"metadata": {"labels": {"app": "x"}}, "spec": spec}
nginx_spec = nginx["spec"]
priv_spec = privileged["spec"]
def deploy(name, spec): return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "x"}}, "template": tmpl(spec)}}

EX, DEF, BASE, EXIST, ENF = "podsecurity-example", "podsecurity-unlabelled", "podsecurity-my-baseline-namespace", "podsecurity-existing", "podsecurity-enforce-only"
cases = []
# Apply Pod Security Standards at the Namespace Level (tutorial)
cases.append(label(EX, {P+"warn": "baseline", P+"warn-version": "latest"}, name="ns-level tutorial: warn baseline"))
cases.append(label(EX, {P+"enforce": "baseline", P+"enforce-version": "latest", P+"warn": "restricted", P+"warn-version": "latest", P+"audit": "restricted", P+"audit-version": "latest"}, name="ns-level tutorial: enforce baseline, warn and audit restricted"))
cases.append(post(EX, nginx, "ns-level tutorial: example-baseline-pod warned"))
cases.append(post(DEF, nginx, "ns-level tutorial: example-baseline-pod in an unlabelled namespace"))
cases.append(post(EX, privileged, "baseline enforced: privileged pod refused"))
# Enforce Pod Security Standards with Namespace Labels (task)
cases.append({"name": "task: create my-baseline-namespace", "method": "POST", "path": "/api/v1/namespaces", "body":
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": BASE, "labels": {
        P+"enforce": "baseline", P+"enforce-version": "v1.37", P+"audit": "restricted", P+"audit-version": "v1.37", P+"warn": "restricted", P+"warn-version": "v1.37"}}}})
cases.append(post(BASE, nginx, "task: pod warned at restricted:v1.37"))
cases.append(post(BASE, privileged, "task: privileged pod refused at baseline:v1.37"))
cases.append(label(EX, {P+"enforce": "restricted"}, dry=True, name="task: kubectl label --dry-run=server enforce=restricted warns about existing pods"))
cases.append(label(BASE, {P+"enforce": "restricted", P+"enforce-version": "v1.37"}, name="task: label my-existing-namespace enforce=restricted v1.37"))
cases.append(label(EX, {P+"enforce": "privileged"}, dry=True, name="dry run: enforce=privileged warns nothing"))
# invalid labels
cases.append(label(EX, {P+"enforce": "foo"}, name="invalid enforce level refused"))
cases.append(label(EX, {P+"enforce-version": "1.37", P+"warn": "strict"}, name="invalid version and warn level refused"))
cases.append({"name": "namespace created with invalid labels refused", "method": "POST", "path": "/api/v1/namespaces", "body":
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "podsecurity-invalid", "labels": {P+"audit": "everything", P+"audit-version": "v2.0"}}}})
# Apply Pod Security Standards at the Cluster Level (tutorial): existing pods
setup = []
for o in [sys_pod("etcd-a"), sys_pod("etcd-b"), sys_pod("etcd-c"), sys_pod("etcd-d"),
          sys_pod("kindnet-vzj42", caps=["NET_RAW", "NET_ADMIN"]), sys_pod("kube-proxy-m6hwf", extra_sc={"privileged": True}),
          coredns, dict(coredns, metadata={"name": "coredns-2"})]:
    setup.append({"method": "POST", "path": "/api/v1/namespaces/%s/pods" % EXIST, "body": o})
c = label(EXIST, {P+"enforce": "privileged"}, dry=True, name="cluster-level tutorial: dry run privileged")
c["setup"] = setup
cases.append(c)
cases.append(label(EXIST, {P+"enforce": "baseline"}, dry=True, name="cluster-level tutorial: dry run baseline"))
cases.append(label(EXIST, {P+"enforce": "restricted"}, dry=True, name="cluster-level tutorial: dry run restricted"))
cases.append(label(EXIST, {P+"enforce": "baseline", P+"enforce-version": "v1.33"}, name="enforce baseline:v1.33"))
cases.append(label(EXIST, {P+"enforce-version": "latest"}, name="same level, newer version: checked again"))
cases.append(label(EXIST, {P+"enforce": "privileged"}, name="relaxed: not checked"))
cases.append(label(EXIST, {P+"enforce": "baseline", P+"enforce-version": None}, name="enforce baseline"))
cases.append({"name": "update of a violating pod that changes no image: admitted", "method": "PATCH", "path": "/api/v1/namespaces/%s/pods/etcd-a" % EXIST,
              "body": {"metadata": {"labels": {"tier": "control-plane"}}}, "ignore": ["*"], "note": "only the code and the warnings are compared"})
cases.append({"name": "update of a violating pod's image: refused", "method": "PATCH", "path": "/api/v1/namespaces/%s/pods/etcd-a" % EXIST,
              "contentType": "application/strategic-merge-patch+json",
              "body": {"spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}}})
cases.append({"name": "ephemeral container violating the enforce level: refused", "method": "PATCH", "path": "/api/v1/namespaces/%s/pods/coredns/ephemeralcontainers" % EXIST,
              "contentType": "application/strategic-merge-patch+json",
              "body": {"spec": {"ephemeralContainers": [{"name": "debugger", "image": "busybox", "securityContext": {"privileged": True}}]}}})
# workloads: warned, never refused
for kind, obj in [("Deployment", deploy("web", nginx_spec)), ("Deployment", deploy("priv", priv_spec)),
                  ("CronJob", {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"}, "spec": {"schedule": "*/5 * * * *",
                      "jobTemplate": {"spec": {"template": {"spec": dict(priv_spec, restartPolicy="Never")}}}}}),
                  ("Job", {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": dict(nginx_spec, restartPolicy="Never")}}}),
                  ("DaemonSet", {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds"}, "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": tmpl(dict(sys_pod("x")["spec"]))}}),
                  ("StatefulSet", {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "ss"}, "spec": {"serviceName": "ss", "selector": {"matchLabels": {"app": "x"}}, "template": tmpl(nginx_spec)}}),
                  ("ReplicaSet", {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"}, "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": tmpl(priv_spec)}}),
                  ("ReplicationController", {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"}, "spec": {"selector": {"app": "x"}, "template": tmpl(nginx_spec)}}),
                  ("PodTemplate", {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "pt"}, "template": tmpl(priv_spec)})]:
    cases.append(post(EX, obj, "workload %s %s in example: warned, not refused" % (kind, obj["metadata"]["name"]), dry=True))
cases.append(label(ENF, {P+"enforce": "restricted"}, name="enforce-only namespace: enforce restricted"))
cases.append(post(ENF, deploy("web", nginx_spec), "enforce-only namespace: warn follows enforce", dry=True))
cases.append(post(ENF, nginx, "enforce-only namespace: pod refused"))
f = {"namespaces": [EX, DEF, EXIST, ENF], "cleanup": [ns_path(BASE), ns_path("podsecurity-invalid")], "cases": cases}
json.dump(f, open("/work/wt/podsecurity/internal/admission/podsecurity/testdata/reference.json", "w"), indent=1)
print(len(cases))
