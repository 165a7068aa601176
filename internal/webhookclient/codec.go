package webhookclient

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// NewCodec is the codec of a webhook protocol, as kube's webhook client
// builds it: JSON over a scheme of the protocol's types (addToScheme),
// encoding to the first of gvs it knows. Its decode errors are the ones
// kube-apiserver reports for a webhook's garbage answer.
func NewCodec(gvs []schema.GroupVersion, addToScheme ...func(*runtime.Scheme) error) (runtime.Codec, error) {
	s := runtime.NewScheme()
	for _, add := range addToScheme {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("webhook scheme: %w", err)
		}
	}
	return serializer.NewCodecFactory(s).LegacyCodec(gvs...), nil
}

// newStatusDecoder decodes the Status of an error answer.
func newStatusDecoder() runtime.Decoder {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(s).UniversalDeserializer()
}
