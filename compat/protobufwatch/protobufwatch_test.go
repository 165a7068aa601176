// Package protobufwatch compares the protobuf watch streams of setpoint and
// kube-apiserver v1.37.2 as client-go decodes them: the same operations
// under a watch with Accept application/vnd.kubernetes.protobuf give the
// same events, Content-Type and frame shapes on both. The reference is one
// started for the run, or the running one SETPOINT_REFERENCE_KUBECONFIG
// names (refcluster.Use); the test writes only in its namespace protobuf.
package protobufwatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	restclientwatch "k8s.io/client-go/rest/watch"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/setpoint-dev/setpoint/compat/refcluster"
	"github.com/setpoint-dev/setpoint/testenv"
)

const protobufMedia = "application/vnd.kubernetes.protobuf"

// refKubeconfig is the reference's admin kubeconfig (TestMain).
var refKubeconfig string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	kc, stop, err := refcluster.Use(ctx, refcluster.Options{EtcdArgs: []string{"--unsafe-no-fsync"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat/protobufwatch: the reference:", err)
		return 1
	}
	defer stop()
	refKubeconfig = kc
	return m.Run()
}

// protobufConfig is cfg as Kubernetes' components configure client-go:
// protobuf bodies, protobuf preferred in answers.
func protobufConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = protobufMedia
	cfg.AcceptContentTypes = protobufMedia + ",application/json"
	return cfg
}

// sameOnBoth runs transcript against a fresh setpoint (testenv) and the
// reference kube-apiserver and fails when what they record differs.
func sameOnBoth(t *testing.T, what string, transcript func(*testing.T, *rest.Config) []string) {
	t.Helper()
	refCfg, err := clientcmd.BuildConfigFromFlags("", refKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	env, err := testenv.Start(testenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	spCfg, err := clientcmd.BuildConfigFromFlags("", env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := transcript(t, spCfg), transcript(t, refCfg)
	if fmt.Sprint(ours) != fmt.Sprint(theirs) {
		t.Fatalf("%s differ:\nsetpoint       %v\nkube-apiserver %v", what, ours, theirs)
	}
	t.Logf("both: %v", theirs)
}

// TestProtobufWatchMatchesReference: the protobuf watch stream of the same
// operations decodes, with client-go's own watch decoder, to the same
// events on setpoint and on kube-apiserver (namespace "protobuf"); and its frames have the same shape: Content-Type,
// the length-delimited WatchEvent, the object's k8s\x00 envelope and kind.
func TestProtobufWatchMatchesReference(t *testing.T) {
	sameOnBoth(t, "protobuf watch streams", watchTranscript)
}

// watchTranscript creates, updates and deletes a ConfigMap in namespace
// "protobuf" under a protobuf watch and returns what the stream carried,
// without the values that differ between clusters (uid, resourceVersion,
// timestamps).
func watchTranscript(t *testing.T, cfg *rest.Config) []string {
	t.Helper()
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(protobufConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	ns := "protobuf"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps(ns)
	_ = cms.Delete(ctx, "pb-diff", metav1.DeleteOptions{})
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "pb-diff"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cms.Delete(context.Background(), "pb-diff", metav1.DeleteOptions{}) })

	// The raw stream, decoded as client-go decodes it.
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	url := cfg.Host + "/api/v1/namespaces/" + ns + "/configmaps?watch=true&fieldSelector=metadata.name%3Dpb-diff" +
		"&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
	req, _ := http.NewRequestWithContext(wctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", protobufMedia+",application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := []string{fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))}
	raw := protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme)
	frames := &frameRecorder{r: protobuf.LengthDelimitedFramer.NewFrameReader(resp.Body)}
	dec := restclientwatch.NewDecoder(streaming.NewDecoder(frames, raw), scheme.Codecs.UniversalDeserializer())

	nextEvent := func(skipBookmarks bool) string {
		for {
			typ, obj, err := dec.Decode()
			if err != nil {
				t.Fatalf("client-go's decoder: %v", err)
			}
			if typ == watch.Bookmark && skipBookmarks {
				continue
			}
			return describeEvent(typ, obj) + " " + frames.shape()
		}
	}
	out = append(out, nextEvent(true), nextEvent(false))
	cm, err := cms.Get(ctx, "pb-diff", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "w"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	out = append(out, nextEvent(true))
	if err := cms.Delete(ctx, "pb-diff", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	return append(out, nextEvent(true))
}

func describeEvent(typ watch.EventType, obj runtime.Object) string {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return fmt.Sprintf("%s %T", typ, obj)
	}
	return fmt.Sprintf("%s %s %s/%s data=%v annotations=%v", typ, cm.GetObjectKind().GroupVersionKind(), cm.Namespace, cm.Name, cm.Data, cm.Annotations)
}

// frameRecorder keeps the last frame read, to describe its envelope.
type frameRecorder struct {
	r    interface{ Read([]byte) (int, error) }
	last []byte
	// partial is set while a frame is read in pieces (io.ErrShortBuffer).
	partial bool
}

func (f *frameRecorder) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if !f.partial {
		f.last = f.last[:0]
	}
	f.last = append(f.last, p[:n]...)
	f.partial = errors.Is(err, io.ErrShortBuffer)
	return n, err
}

func (f *frameRecorder) Close() error { return nil }

// shape describes the last frame: its WatchEvent's object envelope.
func (f *frameRecorder) shape() string {
	var ev metav1.WatchEvent
	if err := ev.Unmarshal(f.last); err != nil {
		return "undecodable frame: " + err.Error()
	}
	if !bytes.HasPrefix(ev.Object.Raw, []byte("k8s\x00")) {
		return "object without the k8s magic"
	}
	var unk runtime.Unknown
	if err := unk.Unmarshal(ev.Object.Raw[4:]); err != nil {
		return "object without a runtime.Unknown: " + err.Error()
	}
	return fmt.Sprintf("envelope=%s/%s contentType=%q", unk.APIVersion, unk.Kind, unk.ContentType)
}
