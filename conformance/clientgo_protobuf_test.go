package conformance

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/setpoint-dev/setpoint/testenv"
)

const protobufMedia = "application/vnd.kubernetes.protobuf"

// contentTypes records the Content-Type of every response a client gets.
type contentTypes struct {
	mu   sync.Mutex
	seen map[string]int
}

func (c *contentTypes) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(r)
		if err == nil {
			c.mu.Lock()
			if c.seen == nil {
				c.seen = map[string]int{}
			}
			c.seen[resp.Header.Get("Content-Type")]++
			c.mu.Unlock()
		}
		return resp, err
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// protobufConfig is cfg as Kubernetes' components configure client-go:
// protobuf bodies, protobuf preferred in answers.
func protobufConfig(cfg *rest.Config, log *contentTypes) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = protobufMedia
	cfg.AcceptContentTypes = protobufMedia + ",application/json"
	if log != nil {
		cfg.Wrap(log.wrap)
	}
	return cfg
}

// TestClientGoProtobuf: client-go in protobuf, as kube-controller-manager
// runs it, does CRUD and runs a SharedInformer against setpoint; what it
// reads equals what a JSON clientset reads, and the answers really are
// protobuf (objects, lists and the watch stream).
func TestClientGoProtobuf(t *testing.T) {
	ctx := context.Background()
	env := startSetpoint(t, testenv.Options{})
	var log contentTypes
	pb, err := kubernetes.NewForConfig(protobufConfig(clientConfig(t, env), &log))
	if err != nil {
		t.Fatal(err)
	}
	js := clientset(t, env)

	// The informer first, so it sees the writes as watch events.
	factory := informers.NewSharedInformerFactoryWithOptions(pb, 0, informers.WithNamespace("default"))
	cms := factory.Core().V1().ConfigMaps().Informer()
	events := newEventLog()
	if _, err := cms.AddEventHandler(events.handler("cm")); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	if !cache.WaitForCacheSync(stop, cms.HasSynced) {
		t.Fatal("protobuf informer did not sync")
	}

	for i := range 10 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pb-%d", i), Labels: map[string]string{"gen": "1"}},
			Data: map[string]string{"i": fmt.Sprint(i)}}
		created, err := pb.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create in protobuf: %v", err)
		}
		got, err := js.CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{})
		if err != nil || !equality.Semantic.DeepEqual(created.Data, got.Data) || created.ResourceVersion != got.ResourceVersion || created.UID != got.UID {
			t.Fatalf("protobuf create and JSON get differ: %v\n%#v\n%#v", err, created, got)
		}
		created.Labels["gen"] = "2"
		if _, err := pb.CoreV1().ConfigMaps("default").Update(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update in protobuf: %v", err)
		}
	}
	if err := pb.CoreV1().ConfigMaps("default").Delete(ctx, "pb-0", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete in protobuf: %v", err)
	}
	if _, err := pb.CoreV1().ConfigMaps("default").Get(ctx, "pb-0", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get deleted in protobuf: %v, want NotFound", err)
	}

	pbList, err := pb.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jsList, err := js.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(pbList.Items, jsList.Items) || pbList.ResourceVersion != jsList.ResourceVersion {
		t.Fatalf("protobuf and JSON lists differ:\n%#v\n%#v", pbList.Items, jsList.Items)
	}

	// The informer converges on the list, through protobuf watch events.
	deadline := time.Now().Add(30 * time.Second)
	for {
		events.mu.Lock()
		done := len(events.byKey) == 10 && fmt.Sprint(events.byKey["cm|pb-0"]) == "[1 2 -1]" && fmt.Sprint(events.byKey["cm|pb-9"]) == "[1 2]"
		errs := events.errors
		events.mu.Unlock()
		if len(errs) > 0 {
			t.Fatalf("informer events out of order: %v", errs)
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			events.mu.Lock()
			t.Fatalf("informer saw %v", events.byKey)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var inStore []corev1.ConfigMap
	for _, o := range cms.GetStore().List() {
		inStore = append(inStore, *o.(*corev1.ConfigMap))
	}
	if len(inStore) != len(jsList.Items) {
		t.Fatalf("informer store holds %d objects, the server %d", len(inStore), len(jsList.Items))
	}

	// A Deployment: another group, spec and status in protobuf.
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "pb-web"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pb-web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "pb-web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
	created, err := pb.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create deployment in protobuf: %v", err)
	}
	got, err := js.AppsV1().Deployments("default").Get(ctx, "pb-web", metav1.GetOptions{})
	if err != nil || !equality.Semantic.DeepEqual(created.Spec, got.Spec) {
		t.Fatalf("protobuf create and JSON get of a Deployment differ: %v", err)
	}
	scale, err := pb.AppsV1().Deployments("default").GetScale(ctx, "pb-web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get scale in protobuf: %v", err)
	}
	scale.Spec.Replicas = 3
	if _, err := pb.AppsV1().Deployments("default").UpdateScale(ctx, "pb-web", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update scale in protobuf: %v", err)
	}
	if got, _ := js.AppsV1().Deployments("default").Get(ctx, "pb-web", metav1.GetOptions{}); *got.Spec.Replicas != 3 {
		t.Fatalf("replicas after a protobuf scale: %d", *got.Spec.Replicas)
	}

	log.mu.Lock()
	defer log.mu.Unlock()
	if log.seen[protobufMedia] == 0 || log.seen[protobufMedia+";stream=watch"] == 0 {
		t.Fatalf("client-go in protobuf got %v: want protobuf answers and protobuf watch streams", log.seen)
	}
	for ct := range log.seen {
		if ct != protobufMedia && ct != protobufMedia+";stream=watch" {
			t.Errorf("client-go in protobuf got %d answers in %q", log.seen[ct], ct)
		}
	}
}
