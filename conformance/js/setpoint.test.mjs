// The official JavaScript client (@kubernetes/client-node) against setpoint.
// Run by ../js_test.go with KUBECONFIG set to a fresh setpoint's admin
// kubeconfig: typed CRUD and errors, watches, an informer that keeps a
// cache equal to the server, and KubernetesObjectApi (the generic client
// `kubectl apply`-like tools use).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';

const kc = new k8s.KubeConfig();
kc.loadFromFile(process.env.KUBECONFIG);
const core = kc.makeApiClient(k8s.CoreV1Api);

async function newNamespace() {
  const name = 'js-' + randomBytes(4).toString('hex');
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

function until(pred, what, ms = 10000) {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const tick = () => {
      if (pred()) return resolve();
      if (Date.now() - start > ms) return reject(new Error('timed out waiting for ' + what));
      setTimeout(tick, 50);
    };
    tick();
  });
}

test('typed CRUD and errors', async () => {
  const ns = await newNamespace();
  const cm = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'a' }, data: { k: '1' } } });
  assert.equal(cm.data.k, '1');
  const got = await core.readNamespacedConfigMap({ name: 'a', namespace: ns });
  assert.equal(got.metadata.uid, cm.metadata.uid);
  got.data.k = '2';
  const replaced = await core.replaceNamespacedConfigMap({ name: 'a', namespace: ns, body: got });
  assert.equal(replaced.data.k, '2');

  await assert.rejects(core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'a' } } }), (e) => {
    assert.equal(e.code, 409);
    const st = JSON.parse(e.body);
    assert.equal(st.reason, 'AlreadyExists');
    assert.equal(st.details.name, 'a');
    return true;
  });
  await assert.rejects(core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'Bad_Name' } } }), (e) => {
    assert.equal(e.code, 422);
    const st = JSON.parse(e.body);
    assert.deepEqual(st.details.causes.map((c) => c.field), ['metadata.name']);
    return true;
  });
  await core.deleteNamespacedConfigMap({ name: 'a', namespace: ns });
  await assert.rejects(core.readNamespacedConfigMap({ name: 'a', namespace: ns }), (e) => e.code === 404);
});

test('watch: events from a resourceVersion', async () => {
  const ns = await newNamespace();
  const list = await core.listNamespacedConfigMap({ namespace: ns });
  const events = [];
  let ended;
  const done = new Promise((resolve) => { ended = resolve; });
  const watch = new k8s.Watch(kc);
  const ctl = await watch.watch(`/api/v1/namespaces/${ns}/configmaps`,
    { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true },
    (type, obj) => { if (type !== 'BOOKMARK') events.push(`${type} ${obj.metadata.name}`); },
    (err) => ended(err));
  await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'w' } } });
  await core.patchNamespacedConfigMap({ name: 'w', namespace: ns, body: { data: { k: 'v' } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
  await core.deleteNamespacedConfigMap({ name: 'w', namespace: ns });
  await until(() => events.length === 3, 'three watch events');
  assert.deepEqual(events, ['ADDED w', 'MODIFIED w', 'DELETED w']);
  ctl.abort();
  await done;
});

test('informer keeps a cache equal to the server', async () => {
  const ns = await newNamespace();
  await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'pre' } } });
  const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${ns}/configmaps`,
    () => core.listNamespacedConfigMap({ namespace: ns }));
  const seen = [];
  informer.on('add', (o) => seen.push('add ' + o.metadata.name));
  informer.on('update', (o) => seen.push('update ' + o.metadata.name));
  informer.on('delete', (o) => seen.push('delete ' + o.metadata.name));
  await informer.start();
  await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'x' } } });
  await core.patchNamespacedConfigMap({ name: 'x', namespace: ns, body: { data: { a: 'b' } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
  await core.deleteNamespacedConfigMap({ name: 'pre', namespace: ns });
  await until(() => seen.length === 4, 'four informer events');
  assert.deepEqual(seen, ['add pre', 'add x', 'update x', 'delete pre']);
  const cached = informer.list(ns).map((o) => o.metadata.name);
  const live = (await core.listNamespacedConfigMap({ namespace: ns })).items.map((o) => o.metadata.name);
  assert.deepEqual(cached, live);
  assert.equal(informer.get('x', ns).data.a, 'b');
  await informer.stop();
});

test('KubernetesObjectApi: create, read, patch, list, delete from specs', async () => {
  const ns = await newNamespace();
  const client = k8s.KubernetesObjectApi.makeApiClient(kc);
  const spec = {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns },
    spec: {
      replicas: 2, selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx' }] } },
    },
  };
  const created = await client.create(spec);
  assert.equal(created.spec.strategy.type, 'RollingUpdate'); // server defaults
  const read = await client.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns } });
  assert.equal(read.metadata.uid, created.metadata.uid);
  const patched = await client.patch({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns }, spec: { replicas: 3 } },
    undefined, undefined, undefined, undefined, k8s.PatchStrategy.MergePatch);
  assert.equal(patched.spec.replicas, 3);
  const applied = await client.patch({ ...spec, spec: { ...spec.spec, replicas: 4 } },
    undefined, undefined, 'js-test', true, k8s.PatchStrategy.ServerSideApply);
  assert.equal(applied.spec.replicas, 4);
  const list = await client.list('apps/v1', 'Deployment', ns);
  assert.deepEqual(list.items.map((d) => d.metadata.name), ['web']);
  const cm = await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: ns }, data: { k: 'v' } });
  assert.equal(cm.data.k, 'v');
  await client.delete({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns } });
  await assert.rejects(client.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns } }),
    (e) => e.code === 404);
});
