package scheme

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
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
		corev1.AddToScheme, appsv1.AddToScheme, coordinationv1.AddToScheme,
		autoscalingv1.AddToScheme, apiextv1.AddToScheme, metav1.AddMetaToScheme,
	} {
		if err := add(s); err != nil {
			panic(err) // the static scheme is broken: a programming error
		}
	}
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return newCodecs(s)
}

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
