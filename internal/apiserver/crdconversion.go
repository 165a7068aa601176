package apiserver

import (
	"context"
	"fmt"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/crconversion"
	"github.com/setpoint-dev/setpoint/internal/customresource"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/webhookclient"
)

// conversionCodec is the codec of ConversionReviews, as kube-apiextensions
// builds its conversion webhook client (v1 and v1beta1).
func conversionCodec() (runtime.Codec, error) {
	return webhookclient.NewCodec([]schema.GroupVersion{apiextv1.SchemeGroupVersion, apiextv1beta1.SchemeGroupVersion},
		apiextv1beta1.AddToScheme, apiextv1.AddToScheme)
}

// converter returns the converter of a CRD whose conversion strategy is
// Webhook (nil otherwise): its ConversionReviews go through the server's
// webhook client, a Service reference through its endpoints.
func (c *crdController) converter(crd *apiextv1.CustomResourceDefinition) (registry.VersionConverter, error) {
	if !customresource.Webhook(crd) {
		return nil, nil
	}
	w := crd.Spec.Conversion.Webhook
	if w == nil || w.ClientConfig == nil {
		return nil, fmt.Errorf("conversion webhook of %s has no client config", crd.Name)
	}
	call := &conversionCaller{client: c.webhooks, cfg: webhookclient.FromConversion(*w.ClientConfig), codec: c.reviewCodec,
		resolver: webhookclient.EnvResolver(c.s.env())}
	return crconversion.New(crd, call)
}

// conversionCaller posts one CRD's ConversionReviews. As kube-apiserver,
// it sets no timeout of its own: the request's context bounds the call.
type conversionCaller struct {
	client   *webhookclient.Client
	cfg      webhookclient.ClientConfig
	codec    runtime.Codec
	resolver webhookclient.Resolver
}

func (c *conversionCaller) Call(ctx context.Context, in, out runtime.Object) error {
	return c.client.Call(ctx, c.cfg, webhookclient.Request{Resolver: c.resolver, UserAgent: "kube-apiserver-conversion"}, c.codec, in, out)
}
