"""The official Python client (Debian's python3-kubernetes) against setpoint.

Run by python_test.go with KUBECONFIG set to a fresh setpoint's admin
kubeconfig: typed CRUD, errors as ApiException with kube-apiserver's Status,
list and watch (watch=True, timeouts, resume from a resourceVersion,
bookmarks, a too-old resourceVersion), and the dynamic client.
"""

import json
import os
import threading
import time
import unittest
import uuid

from kubernetes import client, config, dynamic, watch
from kubernetes.client.rest import ApiException


def setUpModule():
    config.load_kube_config(config_file=os.environ["KUBECONFIG"])


def new_namespace(core):
    name = "py-" + uuid.uuid4().hex[:8]
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    return name


def configmap(name, data=None):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data=data or {"k": "v"})


class TypedClient(unittest.TestCase):
    def setUp(self):
        self.core = client.CoreV1Api()
        self.ns = new_namespace(self.core)

    def test_crud(self):
        created = self.core.create_namespaced_config_map(self.ns, configmap("a", {"k": "1"}))
        self.assertEqual(created.data, {"k": "1"})
        self.assertTrue(created.metadata.uid)
        got = self.core.read_namespaced_config_map("a", self.ns)
        self.assertEqual(got.metadata.resource_version, created.metadata.resource_version)
        got.data["k"] = "2"
        replaced = self.core.replace_namespaced_config_map("a", self.ns, got)
        self.assertEqual(replaced.data, {"k": "2"})
        patched = self.core.patch_namespaced_config_map("a", self.ns, {"metadata": {"labels": {"x": "y"}}})
        self.assertEqual(patched.metadata.labels, {"x": "y"})
        listed = self.core.list_namespaced_config_map(self.ns, label_selector="x=y")
        self.assertEqual([c.metadata.name for c in listed.items], ["a"])
        self.core.delete_namespaced_config_map("a", self.ns)
        with self.assertRaises(ApiException) as e:
            self.core.read_namespaced_config_map("a", self.ns)
        self.assertEqual(e.exception.status, 404)

    def test_errors_carry_the_status(self):
        self.core.create_namespaced_config_map(self.ns, configmap("dup"))
        with self.assertRaises(ApiException) as e:
            self.core.create_namespaced_config_map(self.ns, configmap("dup"))
        self.assertEqual(e.exception.status, 409)
        st = json.loads(e.exception.body)
        self.assertEqual((st["kind"], st["reason"], st["details"]["name"]), ("Status", "AlreadyExists", "dup"))

        with self.assertRaises(ApiException) as e:
            self.core.create_namespaced_config_map(self.ns, configmap("Not_Valid"))
        self.assertEqual(e.exception.status, 422)
        st = json.loads(e.exception.body)
        self.assertEqual(st["reason"], "Invalid")
        self.assertEqual([c["field"] for c in st["details"]["causes"]], ["metadata.name"])

        stale = self.core.read_namespaced_config_map("dup", self.ns)
        self.core.patch_namespaced_config_map("dup", self.ns, {"data": {"k": "newer"}})
        with self.assertRaises(ApiException) as e:
            self.core.replace_namespaced_config_map("dup", self.ns, stale)
        self.assertEqual((e.exception.status, json.loads(e.exception.body)["reason"]), (409, "Conflict"))

    def test_paged_list(self):
        for i in range(7):
            self.core.create_namespaced_config_map(self.ns, configmap("p%d" % i))
        names, token, pages = [], None, 0
        while True:
            page = self.core.list_namespaced_config_map(self.ns, limit=3, _continue=token)
            names += [c.metadata.name for c in page.items]
            pages += 1
            token = page.metadata._continue
            if not token:
                break
        self.assertEqual(names, ["p%d" % i for i in range(7)])
        self.assertEqual(pages, 3)


class Watches(unittest.TestCase):
    def setUp(self):
        self.core = client.CoreV1Api()
        self.ns = new_namespace(self.core)

    def test_watch_from_list_and_resume(self):
        self.core.create_namespaced_config_map(self.ns, configmap("before"))
        listed = self.core.list_namespaced_config_map(self.ns)
        rv = listed.metadata.resource_version

        def later():
            time.sleep(0.5)
            self.core.create_namespaced_config_map(self.ns, configmap("after"))
            self.core.patch_namespaced_config_map("after", self.ns, {"data": {"k": "changed"}})

        t = threading.Thread(target=later)
        t.start()
        w = watch.Watch()
        seen = []
        for ev in w.stream(self.core.list_namespaced_config_map, self.ns, resource_version=rv, timeout_seconds=5):
            seen.append((ev["type"], ev["object"].metadata.name))
            if len(seen) == 2:
                w.stop()
        t.join()
        self.assertEqual(seen, [("ADDED", "after"), ("MODIFIED", "after")])
        # Resume where the stream stopped: only what came after.
        last = w.resource_version
        self.core.delete_namespaced_config_map("before", self.ns)
        resumed = []
        for ev in watch.Watch().stream(self.core.list_namespaced_config_map, self.ns,
                                       resource_version=last, timeout_seconds=2):
            resumed.append((ev["type"], ev["object"].metadata.name))
        self.assertEqual(resumed, [("DELETED", "before")])

    def test_watch_times_out_and_ends(self):
        start = time.monotonic()
        events = list(watch.Watch().stream(self.core.list_namespaced_config_map, self.ns, timeout_seconds=1))
        self.assertEqual(events, [])
        self.assertLess(time.monotonic() - start, 10)

    def test_bookmarks_allowed(self):
        # The client sends allowWatchBookmarks=True; the server must read
        # it as true (and the stream still carries the events).
        self.core.create_namespaced_config_map(self.ns, configmap("b"))
        kinds = [ev["type"] for ev in watch.Watch().stream(
            self.core.list_namespaced_config_map, self.ns, allow_watch_bookmarks=True, timeout_seconds=1)]
        self.assertEqual([k for k in kinds if k != "BOOKMARK"], ["ADDED"])

    def test_watch_from_too_old_resource_version(self):
        # The server was restarted before these tests: resourceVersion 1 is
        # older than its watch window. The client retries once, then raises
        # the 410 of the ERROR event.
        with self.assertRaises(ApiException) as e:
            for _ in watch.Watch().stream(self.core.list_namespaced_config_map, self.ns,
                                          resource_version="1", timeout_seconds=2):
                pass
        self.assertEqual(e.exception.status, 410)


class DynamicClient(unittest.TestCase):
    def test_dynamic_crud(self):
        core = client.CoreV1Api()
        ns = new_namespace(core)
        dyn = dynamic.DynamicClient(client.ApiClient())
        cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
        cms.create(body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}, "data": {"a": "b"}},
                   namespace=ns)
        got = cms.get(name="d", namespace=ns)
        self.assertEqual(got.data.a, "b")
        cms.patch(body={"data": {"a": "c"}}, name="d", namespace=ns,
                  content_type="application/merge-patch+json")
        self.assertEqual(cms.get(name="d", namespace=ns).data.a, "c")
        deployments = dyn.resources.get(api_version="apps/v1", kind="Deployment")
        self.assertTrue(deployments.namespaced)
        items = cms.get(namespace=ns).items
        self.assertEqual([i.metadata.name for i in items], ["d"])
        cms.delete(name="d", namespace=ns)
        with self.assertRaises(dynamic.exceptions.NotFoundError):
            cms.get(name="d", namespace=ns)


if __name__ == "__main__":
    unittest.main()
