package clientgo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	cgcache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/setpoint-dev/setpoint/informer"
	sprest "github.com/setpoint-dev/setpoint/rest"
)

// The informer benchmark lists and watches syncPods pods from a separate
// `setpoint apiserver` process (memory storage), so the client's heap is
// measured alone. The pods are shaped like those a real cluster serves for
// a Deployment: controller ownerReference, one container with resources,
// env, probes and the projected service-account volume, tolerations, a
// Running status with conditions and container statuses, and the two
// managedFields entries kube-controller-manager and the kubelet write.
//
// Knobs, for iterating on a loaded machine or profiling:
//
//   - SETPOINT_SYNC_PODS: the number of pods (default 100,000);
//   - SETPOINT_SYNC_KUBECONFIG: use the running server of that kubeconfig
//     instead of starting one; the pods are loaded only when namespace
//     ns-0 does not exist yet, so repeated runs against one server skip
//     the load (start it with `setpoint apiserver --storage memory`);
//   - SETPOINT_SYNC_CPUPROFILE: write the CPU profile of the benchmark
//     process during each sync (informer side only, not the load) to
//     <value>-<impl>.pprof.
const syncNamespaces = 100

var syncPods = func() int {
	if n, err := strconv.Atoi(os.Getenv("SETPOINT_SYNC_PODS")); err == nil && n > 0 {
		return n
	}
	return 100_000
}()

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

// syncServer is the loaded server, started once per benchmark binary.
type syncServer struct {
	kubeconfig string
	err        error
	dir        string
	cmd        *exec.Cmd
}

var (
	serverStarted bool
	loadedServer  = sync.OnceValue(func() *syncServer {
		serverStarted = true
		s := &syncServer{}
		s.err = s.start()
		return s
	})
)

// TestMain stops the benchmark's server and removes its files.
func TestMain(m *testing.M) {
	code := m.Run()
	if serverStarted {
		s := loadedServer()
		if s.cmd != nil && s.cmd.Process != nil {
			_ = s.cmd.Process.Kill()
			_ = s.cmd.Wait()
		}
		os.RemoveAll(s.dir)
	}
	if s := clientServerStarted; s != nil {
		if s.cmd != nil && s.cmd.Process != nil {
			_ = s.cmd.Process.Kill()
			_ = s.cmd.Wait()
		}
		os.RemoveAll(s.dir)
	}
	stopStreamTargets()
	os.Exit(code)
}

func (s *syncServer) start() error {
	if kc := os.Getenv("SETPOINT_SYNC_KUBECONFIG"); kc != "" {
		s.kubeconfig = kc
		return loadIfEmpty(kc)
	}
	var err error
	if s.dir, err = os.MkdirTemp("", "setpoint-informer-bench"); err != nil {
		return err
	}
	s.kubeconfig, err = startLoadedServer(s)
	return err
}

func startLoadedServer(s *syncServer) (string, error) {
	cmd, err := startSetpointProcess(s.dir, "memory", "")
	if err != nil {
		return "", err
	}
	s.cmd = cmd
	dir := s.dir
	kubeconfig := filepath.Join(dir, "data", "kubeconfig")
	cfg, err := waitReady(kubeconfig)
	if err != nil {
		return "", err
	}
	if err := loadPods(cfg); err != nil {
		return "", err
	}
	return kubeconfig, nil
}

// loadIfEmpty loads the pods into the running server of kubeconfig unless
// an earlier run did (namespace ns-0 exists).
func loadIfEmpty(kubeconfig string) error {
	cfg, err := waitReady(kubeconfig)
	if err != nil {
		return err
	}
	c, err := sprest.New(cfg)
	if err != nil {
		return err
	}
	nss := sprest.For[*corev1.Namespace, *corev1.NamespaceList](c, corev1.SchemeGroupVersion.WithResource("namespaces"), false)
	_, err = nss.Get(context.Background(), "ns-0", metav1.GetOptions{})
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return loadPods(cfg)
	default:
		return fmt.Errorf("look for the loaded pods: %w", err)
	}
}

// startSetpointProcess builds the setpoint binary into dir (unless bin
// names one) and starts `setpoint apiserver` on a free port with its data
// in dir/data, on storage ("memory" or "bolt"); the admin kubeconfig
// appears there once the server is ready.
func startSetpointProcess(dir, storage, bin string) (*exec.Cmd, error) {
	if bin == "" {
		bin = filepath.Join(dir, "setpoint")
		build := exec.Command("go", "build", "-o", bin, "./cmd/setpoint")
		build.Dir = "../.." // the main module
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return nil, fmt.Errorf("build setpoint: %w", err)
		}
	}
	cmd := exec.Command(bin, "apiserver", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0",
		"--storage", storage, "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	// The server dies with the benchmark binary, however that ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start setpoint: %w", err)
	}
	return cmd, nil
}

// waitReady waits for the server of kubeconfig to answer and returns an
// unthrottled configuration for it.
func waitReady(kubeconfig string) (*sprest.Config, error) {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if cfg, err := sprest.ConfigFromKubeconfig(kubeconfig, ""); err == nil {
			// The loaders write 100,000 objects: unthrottled (rest's
			// default is client-go's 5 QPS).
			cfg.QPS = -1
			c, err := sprest.New(cfg)
			if err == nil {
				ns := sprest.For[*corev1.Namespace, *corev1.NamespaceList](c, corev1.SchemeGroupVersion.WithResource("namespaces"), false)
				if _, err := ns.Get(context.Background(), "default", metav1.GetOptions{}); err == nil {
					return cfg, nil
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, fmt.Errorf("setpoint apiserver not ready after 60s")
}

// loadPods creates syncPods pods over syncNamespaces namespaces with 32
// concurrent clients, then writes each pod's status.
func loadPods(cfg *sprest.Config) error {
	c, err := sprest.New(cfg)
	if err != nil {
		return err
	}
	ctx := context.Background()
	nss := sprest.For[*corev1.Namespace, *corev1.NamespaceList](c, corev1.SchemeGroupVersion.WithResource("namespaces"), false)
	// No controller manager runs: each namespace's default service
	// account, which the pods name, is made here.
	sas := sprest.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](c, corev1.SchemeGroupVersion.WithResource("serviceaccounts"), true)
	for i := range syncNamespaces {
		ns := "ns-" + strconv.Itoa(i)
		if _, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create namespace: %w", err)
		}
		if _, err := sas.Namespace(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
			metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create service account: %w", err)
		}
	}
	pods := sprest.For[*corev1.Pod, *corev1.PodList](c, podsGVR, true)
	const workers = 32
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < syncPods; i += workers {
				p := realisticPod(i)
				created, err := pods.Namespace(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
				if err != nil {
					errs <- fmt.Errorf("create pod %d: %w", i, err)
					return
				}
				created.Status = p.Status
				if _, err := pods.Namespace(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
					errs <- fmt.Errorf("status of pod %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func realisticPod(i int) *corev1.Pod {
	app := "app-" + strconv.Itoa(i%50)
	hash := "5d8f7c9b" + strconv.Itoa(i%50)
	rs := app + "-" + hash
	node := "node-" + strconv.Itoa(i%100)
	start := metav1.NewTime(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	truth := true
	// Like the service-account admission plugin, every pod gets its own
	// projected volume name, so containers and volumes differ per pod.
	apiAccess := fmt.Sprintf("kube-api-access-%05x", (i*7919)%0xfffff)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns-" + strconv.Itoa(i%syncNamespaces),
			Name:      rs + "-" + strconv.Itoa(i),
			Labels:    map[string]string{"app": app, "pod-template-hash": hash, "tier": "backend"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs,
				UID: types.UID(fmt.Sprintf("6f1b3c2e-0000-4000-8000-%012d", i%50)), Controller: &truth, BlockOwnerDeletion: &truth,
			}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &start,
					FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(controllerManagerFields)}},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &start,
					FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(kubeletFields)}, Subresource: "status"},
			},
		},
		Spec: corev1.PodSpec{
			NodeName:           node,
			ServiceAccountName: "default",
			Containers: []corev1.Container{{
				Name: "server", Image: "registry.example.com/team/" + app + ":1.27.3",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
					PeriodSeconds: 10},
				VolumeMounts: []corev1.VolumeMount{{Name: apiAccess, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}},
			}},
			Volumes: []corev1.Volume{{Name: apiAccess, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptrInt64(3607)}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				}}}}},
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptrInt64(300)},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptrInt64(300)},
			},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "10.0.0." + strconv.Itoa(i%100),
			PodIP: fmt.Sprintf("10.244.%d.%d", (i/250)%256, i%250+1), StartTime: &start, QOSClass: corev1.PodQOSBurstable,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: start},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: start},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: start},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: start},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "server", Ready: true, Started: &truth, Image: "registry.example.com/team/" + app + ":1.27.3",
				ImageID:     "registry.example.com/team/" + app + "@sha256:4c2f1f3ad9b0e1c7a8f05c1b7f0e4b1d5e6a2c3b4d5e6f708192a3b4c5d6e7f8",
				ContainerID: fmt.Sprintf("containerd://%064x", i),
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}},
			}},
		},
	}
}

// The fieldsV1 sets, as a real cluster records them for such a pod.
const controllerManagerFields = `{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{},"f:tier":{}},` +
	`"f:ownerReferences":{".":{},"k:{\"uid\":\"6f1b3c2e-0000-4000-8000-000000000000\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"server\"}":` +
	`{".":{},"f:env":{".":{},"k:{\"name\":\"LOG_LEVEL\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"POD_NAME\"}":{".":{},"f:name":{},` +
	`"f:valueFrom":{".":{},"f:fieldRef":{}}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,` +
	`\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:readinessProbe":{".":{},"f:failureThreshold":{},` +
	`"f:httpGet":{".":{},"f:path":{},"f:port":{},"f:scheme":{}},"f:periodSeconds":{},"f:successThreshold":{},"f:timeoutSeconds":{}},` +
	`"f:resources":{".":{},"f:limits":{".":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},` +
	`"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},` +
	`"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}`

const kubeletFields = `{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},` +
	`"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},` +
	`"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},` +
	`"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.244.1.2\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`

// BenchmarkInformerSync starts a pod informer against the loaded server and
// waits for its initial sync. It reports the time to sync and the heap the
// informer retains afterwards (HeapAlloc after GC, minus the same before
// the informer started), as MB-retained.
//
//   - client-go: informers.NewSharedInformerFactory, default settings (no transform);
//   - client-go+strip: the same with a transform dropping managedFields,
//     which is what setpoint does by default;
//   - setpoint: informer.NewFactory + informer.For, default settings
//     (managedFields stripped, objects compacted with CompactShare).
func BenchmarkInformerSync(b *testing.B) {
	srv := loadedServer()
	if srv.err != nil {
		b.Fatal(srv.err)
	}
	b.Run("impl=client-go", func(b *testing.B) {
		benchSync(b, "client-go", func(ctx context.Context) func() { return runClientGo(b, ctx, srv, false) })
	})
	b.Run("impl=client-go+strip", func(b *testing.B) {
		benchSync(b, "client-go+strip", func(ctx context.Context) func() { return runClientGo(b, ctx, srv, true) })
	})
	b.Run("impl=setpoint", func(b *testing.B) {
		benchSync(b, "setpoint", func(ctx context.Context) func() { return runSetpoint(b, ctx, srv) })
	})
}

// benchSync runs start b.N times; start must return once the informer has
// synced, with a function that checks the cache size and keeps it alive.
func benchSync(b *testing.B, impl string, start func(ctx context.Context) func()) {
	var retained, elapsed float64
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		before := heapAfterGC()
		stopProfile := startSyncProfile(b, impl)
		t0 := time.Now()
		b.StartTimer()
		check := start(ctx)
		b.StopTimer()
		stopProfile()
		elapsed += time.Since(t0).Seconds()
		retained += float64(heapAfterGC()-before) / (1 << 20)
		check()
		cancel()
		time.Sleep(200 * time.Millisecond) // let the informer's goroutines end before the next round
	}
	b.ReportMetric(retained/float64(b.N), "MB-retained")
	b.ReportMetric(elapsed/float64(b.N), "s-to-sync")
}

// startSyncProfile starts the CPU profile SETPOINT_SYNC_CPUPROFILE asks
// for, if any, and returns the function that ends it.
func startSyncProfile(b *testing.B, impl string) func() {
	prefix := os.Getenv("SETPOINT_SYNC_CPUPROFILE")
	if prefix == "" {
		return func() {}
	}
	f, err := os.Create(prefix + "-" + impl + ".pprof")
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func heapAfterGC() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func runClientGo(b *testing.B, ctx context.Context, srv *syncServer, strip bool) func() {
	cfg, err := clientcmd.BuildConfigFromFlags("", srv.kubeconfig)
	if err != nil {
		b.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	f := informers.NewSharedInformerFactory(cs, 0)
	inf := f.Core().V1().Pods().Informer()
	if strip {
		if err := inf.SetTransform(stripManagedFields); err != nil {
			b.Fatal(err)
		}
	}
	f.Start(ctx.Done())
	if !cgcache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		b.Fatal("client-go informer did not sync")
	}
	return func() {
		if n := len(inf.GetIndexer().ListKeys()); n != syncPods {
			b.Fatalf("client-go cache holds %d pods, want %d", n, syncPods)
		}
		runtime.KeepAlive(f)
	}
}

func runSetpoint(b *testing.B, ctx context.Context, srv *syncServer) func() {
	cfg, err := sprest.ConfigFromKubeconfig(srv.kubeconfig, "")
	if err != nil {
		b.Fatal(err)
	}
	c, err := sprest.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	f := informer.NewFactory(c, informer.FactoryOptions{})
	inf := informer.For[*corev1.Pod, *corev1.PodList](f, podsGVR, true)
	f.Start(ctx)
	if !informer.WaitForCacheSync(ctx, inf.HasSynced) {
		b.Fatal("setpoint informer did not sync")
	}
	return func() {
		if n := inf.Indexer().Len(); n != syncPods {
			b.Fatalf("setpoint cache holds %d pods, want %d", n, syncPods)
		}
		runtime.KeepAlive(f)
	}
}

// stripManagedFields is the client-go transform equivalent to setpoint's
// default informer.StripManagedFields.
func stripManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

func ptrInt64(v int64) *int64 { return &v }
