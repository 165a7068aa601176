package scheme

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// Codecs bundles the scheme with its serializers.
type Codecs struct {
	Scheme *runtime.Scheme
	// Factory negotiates wire serializers (JSON, YAML, protobuf).
	Factory serializer.CodecFactory
	// JSON is the compact JSON serializer; StrictJSON rejects unknown and
	// duplicate fields.
	JSON, StrictJSON *json.Serializer
	// YAML and StrictYAML decode YAML bodies.
	YAML, StrictYAML *json.Serializer
	// Proto encodes and decodes storage values.
	Proto *protobuf.Serializer
}

// New builds the scheme of the built-in kinds and its codecs.
func New() *Codecs {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, coordinationv1.AddToScheme, apiextv1.AddToScheme,
		admissionregistrationv1.AddToScheme, authenticationv1.AddToScheme, authorizationv1.AddToScheme,
		autoscalingv1.AddToScheme, autoscalingv2.AddToScheme, batchv1.AddToScheme, certificatesv1.AddToScheme,
		discoveryv1.AddToScheme, eventsv1.AddToScheme, flowcontrolv1.AddToScheme, networkingv1.AddToScheme,
		nodev1.AddToScheme, policyv1.AddToScheme, rbacv1.AddToScheme, resourcev1.AddToScheme,
		schedulingv1.AddToScheme, storagev1.AddToScheme, storagemigrationv1.AddToScheme,
		apiregistrationv1.AddToScheme, metricsv1beta1.AddToScheme, metav1.AddMetaToScheme,
	} {
		if err := add(s); err != nil {
			panic(err) // the static scheme is broken: a programming error
		}
	}
	// pods/eviction takes a policy/v1beta1 Eviction body as well, as
	// kube-apiserver does, though no policy/v1beta1 resource is served.
	s.AddKnownTypes(policyv1beta1.SchemeGroupVersion, &policyv1beta1.Eviction{})
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return newCodecs(s)
}

// CodecsFor builds the codecs of s (a client's scheme, which may hold
// kinds of its own).
func CodecsFor(s *runtime.Scheme) *Codecs { return newCodecs(s) }

func newCodecs(s *runtime.Scheme) *Codecs {
	opts := func(yaml, strict bool) json.SerializerOptions {
		return json.SerializerOptions{Yaml: yaml, Strict: strict}
	}
	return &Codecs{
		Scheme:     s,
		Factory:    serializer.NewCodecFactory(s),
		JSON:       json.NewSerializerWithOptions(leadingTypeMeta{}, s, s, opts(false, false)),
		StrictJSON: json.NewSerializerWithOptions(leadingTypeMeta{}, s, s, opts(false, true)),
		YAML:       json.NewSerializerWithOptions(json.DefaultMetaFactory, s, s, opts(true, false)),
		StrictYAML: json.NewSerializerWithOptions(json.DefaultMetaFactory, s, s, opts(true, true)),
		Proto:      protobuf.NewSerializer(s, s),
	}
}
