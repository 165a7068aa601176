package crdschema

import (
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const crdYAML = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer}
          status:
            type: object
            properties:
              replicas: {type: integer}
              selector: {type: string}
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}
    additionalPrinterColumns:
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
`

func crd(t *testing.T) *apiextv1.CustomResourceDefinition {
	t.Helper()
	var c apiextv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict([]byte(crdYAML), &c); err != nil {
		t.Fatal(err)
	}
	SetCRDDefaults(&c)
	return &c
}

func TestSetCRDDefaults(t *testing.T) {
	c := crd(t)
	if c.Spec.Names.Singular != "widget" || c.Spec.Names.ListKind != "WidgetList" {
		t.Errorf("names %+v", c.Spec.Names)
	}
	if c.Spec.Conversion == nil || c.Spec.Conversion.Strategy != apiextv1.NoneConverter {
		t.Errorf("conversion %+v", c.Spec.Conversion)
	}
	if strings.Join(c.Status.StoredVersions, ",") != "v1" {
		t.Errorf("storedVersions %v", c.Status.StoredVersions)
	}
	c.Spec.Names.Singular = "custom"
	SetCRDDefaults(c)
	if c.Spec.Names.Singular != "custom" {
		t.Errorf("SetCRDDefaults overwrote singular")
	}
}

func TestValidateCRD(t *testing.T) {
	if errs := ValidateCRD(crd(t)); len(errs) > 0 {
		t.Fatalf("valid CRD rejected: %v", errs)
	}
	cases := []struct {
		name   string
		mutate func(c *apiextv1.CustomResourceDefinition)
		want   string
	}{
		{"name must be plural.group", func(c *apiextv1.CustomResourceDefinition) { c.Name = "gadgets.example.com" },
			`metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group`},
		{"group needs a dot", func(c *apiextv1.CustomResourceDefinition) { c.Spec.Group = "example"; c.Name = "widgets.example" },
			`spec.group: Invalid value: "example": should be a domain with at least one dot`},
		{"group must be a DNS subdomain", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Group = "Ex_ample.com"
			c.Name = "widgets.Ex_ample.com"
		},
			`spec.group: Invalid value: "Ex_ample.com"`},
		{"protected group", func(c *apiextv1.CustomResourceDefinition) { c.Spec.Group = "x.k8s.io"; c.Name = "widgets.x.k8s.io" },
			`metadata.annotations[api-approved.kubernetes.io]: Required value`},
		{"plural lower-case", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Names.Plural = "Widgets"
			c.Name = "Widgets.example.com"
		},
			`spec.names.plural: Invalid value: "Widgets"`},
		{"kind identifier", func(c *apiextv1.CustomResourceDefinition) { c.Spec.Names.Kind = "Wid get" },
			`spec.names.kind: Invalid value: "Wid get": may have mixed case, but should otherwise match`},
		{"listKind differs from kind", func(c *apiextv1.CustomResourceDefinition) { c.Spec.Names.ListKind = "Widget" },
			`spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same`},
		{"missing kind", func(c *apiextv1.CustomResourceDefinition) { c.Spec.Names.Kind = "" },
			`spec.names.kind: Required value`},
		{"scope", func(c *apiextv1.CustomResourceDefinition) { c.Spec.Scope = "Global" },
			`spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"`},
		{"no versions", func(c *apiextv1.CustomResourceDefinition) { c.Spec.Versions = nil },
			`spec.versions: Required value`},
		{"two storage versions", func(c *apiextv1.CustomResourceDefinition) {
			v := c.Spec.Versions[0].DeepCopy()
			v.Name = "v2"
			c.Spec.Versions = append(c.Spec.Versions, *v)
		}, `spec.versions: Invalid value: ["v1","v2"]: must have exactly one version marked as storage version`},
		{"duplicate version names", func(c *apiextv1.CustomResourceDefinition) {
			v := c.Spec.Versions[0].DeepCopy()
			v.Storage = false
			c.Spec.Versions = append(c.Spec.Versions, *v)
		}, `must contain unique version names`},
		{"version name DNS-1035", func(c *apiextv1.CustomResourceDefinition) { c.Spec.Versions[0].Name = "V1" },
			`spec.versions[0].name: Invalid value: "V1"`},
		{"missing schema", func(c *apiextv1.CustomResourceDefinition) { c.Spec.Versions[0].Schema = nil },
			`spec.versions[0].schema.openAPIV3Schema: Required value`},
		{"non-structural schema", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = apiextv1.JSONSchemaProps{}
		}, `spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields`},
		{"status subresource restricts the root", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.AnyOf = []apiextv1.JSONSchemaProps{{Required: []string{"spec"}}}
		}, `spec.validation.openAPIV3Schema: Invalid value: {"ID":"","Schema":"","Ref":null,"Description":"","Type":"object",`},
		{"specReplicasPath under .spec", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Subresources.Scale.SpecReplicasPath = ".status.replicas"
		}, `spec.subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec`},
		{"statusReplicasPath under .status", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Subresources.Scale.StatusReplicasPath = "status.replicas"
		}, `spec.subresources.scale.statusReplicasPath: Invalid value: "status.replicas": must be a simple json path starting with .`},
		{"labelSelectorPath under .spec or .status", func(c *apiextv1.CustomResourceDefinition) {
			s := ".metadata.labels"
			c.Spec.Versions[0].Subresources.Scale.LabelSelectorPath = &s
		}, `spec.subresources.scale.labelSelectorPath: Invalid value: ".metadata.labels": should be a json path under either .spec or .status`},
		{"column type", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].AdditionalPrinterColumns[0].Type = "float"
		},
			`spec.additionalPrinterColumns[0].type: Invalid value: "float": must be one of boolean,date,integer,number,string`},
		{"column name", func(c *apiextv1.CustomResourceDefinition) { c.Spec.Versions[0].AdditionalPrinterColumns[0].Name = "" },
			`spec.additionalPrinterColumns[0].name: Required value`},
		{"column jsonPath", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].AdditionalPrinterColumns[0].JSONPath = ".spec["
		},
			`spec.additionalPrinterColumns[0].jsonPath: Invalid value: ".spec["`},
		{"conversion webhook without client config", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.WebhookConverter}
		}, `spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook`},
		{"conversion webhook without review versions", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.WebhookConverter}
		}, `spec.conversion.conversionReviewVersions: Required value`},
		{"conversion webhook unknown review version", func(c *apiextv1.CustomResourceDefinition) {
			u := "https://127.0.0.1:8443/convert"
			c.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.WebhookConverter, Webhook: &apiextv1.WebhookConversion{
				ClientConfig: &apiextv1.WebhookClientConfig{URL: &u}, ConversionReviewVersions: []string{"v2", "v2"}}}
		}, "spec.conversion.conversionReviewVersions[1]: Invalid value: \"v2\": duplicate version\nspec.conversion.conversionReviewVersions: Invalid value: [\"v2\",\"v2\"]: must include at least one of v1, v1beta1"},
		{"conversion webhook http URL", func(c *apiextv1.CustomResourceDefinition) {
			u := "http://127.0.0.1:8443/convert?x=1"
			c.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.WebhookConverter, Webhook: &apiextv1.WebhookConversion{
				ClientConfig: &apiextv1.WebhookClientConfig{URL: &u}, ConversionReviewVersions: []string{"v1"}}}
		}, "spec.conversion.webhookClientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]\nspec.conversion.webhookClientConfig.url: Invalid value: \"x=1\": query parameters are not permitted in the URL"},
		{"conversion webhook bad caBundle", func(c *apiextv1.CustomResourceDefinition) {
			u := "https://127.0.0.1:8443/convert"
			c.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.WebhookConverter, Webhook: &apiextv1.WebhookConversion{
				ClientConfig: &apiextv1.WebhookClientConfig{URL: &u, CABundle: []byte("junk")}, ConversionReviewVersions: []string{"v1"}}}
		}, `spec.conversion.webhookClientConfig.caBundle: Invalid value: "anVuaw==": unable to load root certificates: unable to parse bytes as PEM block`},
		{"conversion webhook service and URL", func(c *apiextv1.CustomResourceDefinition) {
			u := "https://127.0.0.1:8443/convert"
			c.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.WebhookConverter, Webhook: &apiextv1.WebhookConversion{
				ClientConfig: &apiextv1.WebhookClientConfig{URL: &u, Service: &apiextv1.ServiceReference{Name: "s", Namespace: "n"}}, ConversionReviewVersions: []string{"v1"}}}
		}, `spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required`},
		{"conversion None with webhook", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.NoneConverter, Webhook: &apiextv1.WebhookConversion{
				ConversionReviewVersions: []string{"v1"}}}
		}, `spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook`},
		{"preserveUnknownFields", func(c *apiextv1.CustomResourceDefinition) { c.Spec.PreserveUnknownFields = true },
			`spec.preserveUnknownFields: Invalid value: true`},
		{"selectable field must be a scalar", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].SelectableFields = []apiextv1.SelectableField{{JSONPath: ".spec"}}
		}, `spec.selectableFields[0].jsonPath: Invalid value: ".spec": must point to a field of type string, boolean or integer`},
		{"schema of two versions differ", func(c *apiextv1.CustomResourceDefinition) {
			v := c.Spec.Versions[0].DeepCopy()
			v.Name, v.Storage = "v2", false
			v.Schema.OpenAPIV3Schema.Properties["spec"] = apiextv1.JSONSchemaProps{}
			c.Spec.Versions = append(c.Spec.Versions, *v)
		}, `spec.versions[1].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields`},
		{"columns of two versions differ", func(c *apiextv1.CustomResourceDefinition) {
			v := c.Spec.Versions[0].DeepCopy()
			v.Name, v.Storage = "v2", false
			v.AdditionalPrinterColumns[0].Type = "float"
			c.Spec.Versions = append(c.Spec.Versions, *v)
		}, `spec.versions[1].additionalPrinterColumns[0].type: Invalid value: "float"`},
		{"per-version selectable fields on a shared schema", func(c *apiextv1.CustomResourceDefinition) {
			v := c.Spec.Versions[0].DeepCopy()
			v.Name, v.Storage = "v2", false
			v.SelectableFields = []apiextv1.SelectableField{{JSONPath: ".spec.replicas"}}
			c.Spec.Versions = append(c.Spec.Versions, *v)
		}, "spec.versions[1].selectableFields: Invalid value: \"\": may only be set when `version.schema.openAPIV3Schema` is not included"},
		{"stored version missing from spec", func(c *apiextv1.CustomResourceDefinition) {
			c.Status.StoredVersions = []string{"v1", "v1beta1"}
		}, `status.storedVersions[1]: Invalid value: "v1beta1": missing from spec.versions`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := crd(t)
			tc.mutate(c)
			all := joined(ValidateCRD(c))
			if !strings.Contains(all, tc.want) {
				t.Errorf("want an error containing %q, got:\n%s", tc.want, all)
			}
		})
	}
}

func TestValidateCRDUpdate(t *testing.T) {
	old := crd(t)
	old.Status.Conditions = []apiextv1.CustomResourceDefinitionCondition{{Type: apiextv1.Established, Status: apiextv1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	if errs := ValidateCRDUpdate(crd(t), old); len(errs) > 0 {
		t.Fatalf("unchanged CRD rejected: %v", errs)
	}
	addV2 := func(c *apiextv1.CustomResourceDefinition) {
		v := c.Spec.Versions[0].DeepCopy()
		v.Name = "v2"
		c.Spec.Versions[0].Storage = false
		c.Spec.Versions = append(c.Spec.Versions, *v)
		RecordStorageVersion(c)
	}
	okUpdate := crd(t)
	addV2(okUpdate)
	if errs := ValidateCRDUpdate(okUpdate, old); len(errs) > 0 {
		t.Fatalf("adding a storage version rejected: %v", errs)
	}

	cases := []struct {
		name   string
		mutate func(c *apiextv1.CustomResourceDefinition)
		want   string
	}{
		{"group immutable", func(c *apiextv1.CustomResourceDefinition) { c.Spec.Group = "other.com"; c.Name = "widgets.other.com" },
			`spec.group: Invalid value: "other.com": field is immutable`},
		{"plural immutable", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Names.Plural = "gizmos"
			c.Name = "gizmos.example.com"
		},
			`spec.names.plural: Invalid value: "gizmos": field is immutable`},
		{"scope immutable", func(c *apiextv1.CustomResourceDefinition) { c.Spec.Scope = apiextv1.ClusterScoped },
			`spec.scope: Invalid value: "Cluster": field is immutable`},
		{"kind immutable once established", func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Names.Kind = "Gizmo"
			c.Spec.Names.ListKind = "GizmoList"
		},
			`spec.names.kind: Invalid value: "Gizmo": field is immutable`},
		{"stored version cannot be removed", func(c *apiextv1.CustomResourceDefinition) {
			addV2(c)
			c.Spec.Versions = c.Spec.Versions[1:]
			c.Status.StoredVersions = []string{"v2"} // even if the client drops it, old status remembers v1
		}, `status.storedVersions[1]: Invalid value: "v1": missing from spec.versions; v1 was previously a storage version`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := crd(t)
			tc.mutate(c)
			all := joined(ValidateCRDUpdate(c, old))
			if !strings.Contains(all, tc.want) {
				t.Errorf("want an error containing %q, got:\n%s", tc.want, all)
			}
		})
	}
}

func TestValidateCRDStatus(t *testing.T) {
	c := crd(t)
	if errs := ValidateCRDStatus(c); len(errs) > 0 {
		t.Fatalf("valid status rejected: %v", errs)
	}
	for name, stored := range map[string][]string{"empty": nil, "not the storage version": {"v9"}} {
		c := crd(t)
		c.Status.StoredVersions = stored
		if errs := ValidateCRDStatus(c); len(errs) == 0 || errs[0].Field != "status.storedVersions" && errs[0].Field != "status.storedVersions[0]" {
			t.Errorf("%s: errors %v", name, errs)
		}
	}
}
