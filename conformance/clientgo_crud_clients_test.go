package conformance

import (
	"context"
	"fmt"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	apiregistrationv1client "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset/typed/apiregistration/v1"
)

// crudScheme knows every kind of the rows: client-go's and the
// aggregator's APIService.
var crudScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := scheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := apiregistrationv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

type corev1Client = typedcorev1.CoreV1Interface

// apiregistrationClient is the aggregator's typed client (APIServices are
// not in client-go's clientset), on the clientset's configuration.
func apiregistrationClient(t *testing.T, cfg *rest.Config) apiregistrationv1client.ApiregistrationV1Interface {
	t.Helper()
	c, err := aggregator.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c.ApiregistrationV1()
}

// typedClient is what every client-go typed resource client has.
type typedClient[T runtime.Object, L runtime.Object] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
}

// typedOps adapts a typed client; UpdateStatus, DeleteCollection and the
// scale subresource are used when the client has them.
func typedOps[T runtime.Object, L runtime.Object](c typedClient[T, L]) crudOps {
	ops := crudOps{
		create: func(ctx context.Context, o runtime.Object) (runtime.Object, error) {
			return c.Create(ctx, o.(T), metav1.CreateOptions{})
		},
		get: func(ctx context.Context, name string) (runtime.Object, error) {
			return c.Get(ctx, name, metav1.GetOptions{})
		},
		list: func(ctx context.Context, opts metav1.ListOptions) ([]runtime.Object, error) {
			l, err := c.List(ctx, opts)
			if err != nil {
				return nil, err
			}
			return meta.ExtractList(l)
		},
		update: func(ctx context.Context, o runtime.Object) (runtime.Object, error) {
			return c.Update(ctx, o.(T), metav1.UpdateOptions{})
		},
		patch: func(ctx context.Context, name string, pt types.PatchType, data []byte) (runtime.Object, error) {
			return c.Patch(ctx, name, pt, data, metav1.PatchOptions{})
		},
		delete: c.Delete,
	}
	if s, ok := any(c).(interface {
		UpdateStatus(context.Context, T, metav1.UpdateOptions) (T, error)
	}); ok {
		ops.updateStatus = func(ctx context.Context, o runtime.Object) (runtime.Object, error) {
			return s.UpdateStatus(ctx, o.(T), metav1.UpdateOptions{})
		}
	}
	if d, ok := any(c).(interface {
		DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error
	}); ok {
		ops.deleteCollection = func(ctx context.Context, opts metav1.DeleteOptions, sel metav1.ListOptions) error {
			return d.DeleteCollection(ctx, opts, sel)
		}
	}
	if s, ok := any(c).(interface {
		GetScale(context.Context, string, metav1.GetOptions) (*autoscalingv1.Scale, error)
		UpdateScale(context.Context, string, *autoscalingv1.Scale, metav1.UpdateOptions) (*autoscalingv1.Scale, error)
	}); ok {
		ops.getScale = func(ctx context.Context, name string) (*autoscalingv1.Scale, error) {
			return s.GetScale(ctx, name, metav1.GetOptions{})
		}
		ops.updateScale = func(ctx context.Context, name string, sc *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
			return s.UpdateScale(ctx, name, sc, metav1.UpdateOptions{})
		}
	}
	return ops
}

// createOnlyOps adapts a typed client of a create-only resource.
func createOnlyOps[T runtime.Object](c interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
}) crudOps {
	return crudOps{create: func(ctx context.Context, o runtime.Object) (runtime.Object, error) {
		return c.Create(ctx, o.(T), metav1.CreateOptions{})
	}}
}

// restDeleteCollection is a deletecollection through a typed group's REST
// client, for the typed clients that have none (services: kube-apiserver
// serves it; namespaces: it does not, and the rows check the 405).
func restDeleteCollection(rc rest.Interface, namespace, resource string) func(context.Context, metav1.DeleteOptions, metav1.ListOptions) error {
	return func(ctx context.Context, _ metav1.DeleteOptions, sel metav1.ListOptions) error {
		return rc.Delete().Namespace(namespace).Resource(resource).VersionedParams(&sel, scheme.ParameterCodec).Do(ctx).Error()
	}
}

// typedCaseOps is the typed clientset's access to a row's resource.
func typedCaseOps(t *testing.T, env crudEnv, c crudCase) crudOps {
	t.Helper()
	cs := env.cs
	ns := crudNamespace
	core := cs.CoreV1()
	if c.gvr.Group == "" {
		return typedCoreOps(t, core, c)
	}
	key := c.gvr.Group + "/" + c.gvr.Version + "/" + c.gvr.Resource
	apps, batch, rbac, net, st, dra := cs.AppsV1(), cs.BatchV1(), cs.RbacV1(), cs.NetworkingV1(), cs.StorageV1(), cs.ResourceV1()
	adm, authn, authz, certs, fc := cs.AdmissionregistrationV1(), cs.AuthenticationV1(), cs.AuthorizationV1(), cs.CertificatesV1(), cs.FlowcontrolV1()
	switch key {
	case "apps/v1/deployments":
		return typedOps(apps.Deployments(ns))
	case "apps/v1/replicasets":
		return typedOps(apps.ReplicaSets(ns))
	case "apps/v1/statefulsets":
		return typedOps(apps.StatefulSets(ns))
	case "apps/v1/daemonsets":
		return typedOps(apps.DaemonSets(ns))
	case "apps/v1/controllerrevisions":
		return typedOps(apps.ControllerRevisions(ns))
	case "batch/v1/jobs":
		return typedOps(batch.Jobs(ns))
	case "batch/v1/cronjobs":
		return typedOps(batch.CronJobs(ns))
	case "autoscaling/v1/horizontalpodautoscalers":
		return typedOps(cs.AutoscalingV1().HorizontalPodAutoscalers(ns))
	case "autoscaling/v2/horizontalpodautoscalers":
		return typedOps(cs.AutoscalingV2().HorizontalPodAutoscalers(ns))
	case "policy/v1/poddisruptionbudgets":
		return typedOps(cs.PolicyV1().PodDisruptionBudgets(ns))
	case "coordination.k8s.io/v1/leases":
		return typedOps(cs.CoordinationV1().Leases(ns))
	case "discovery.k8s.io/v1/endpointslices":
		return typedOps(cs.DiscoveryV1().EndpointSlices(ns))
	case "events.k8s.io/v1/events":
		return typedOps(cs.EventsV1().Events(ns))
	case "node.k8s.io/v1/runtimeclasses":
		return typedOps(cs.NodeV1().RuntimeClasses())
	case "scheduling.k8s.io/v1/priorityclasses":
		return typedOps(cs.SchedulingV1().PriorityClasses())
	case "storagemigration.k8s.io/v1/storageversionmigrations":
		return typedOps(cs.StoragemigrationV1().StorageVersionMigrations())
	case "apiregistration.k8s.io/v1/apiservices":
		return typedOps(apiregistrationClient(t, env.cfg).APIServices())
	case "rbac.authorization.k8s.io/v1/roles":
		return typedOps(rbac.Roles(ns))
	case "rbac.authorization.k8s.io/v1/rolebindings":
		return typedOps(rbac.RoleBindings(ns))
	case "rbac.authorization.k8s.io/v1/clusterroles":
		return typedOps(rbac.ClusterRoles())
	case "rbac.authorization.k8s.io/v1/clusterrolebindings":
		return typedOps(rbac.ClusterRoleBindings())
	case "networking.k8s.io/v1/ingresses":
		return typedOps(net.Ingresses(ns))
	case "networking.k8s.io/v1/ingressclasses":
		return typedOps(net.IngressClasses())
	case "networking.k8s.io/v1/networkpolicies":
		return typedOps(net.NetworkPolicies(ns))
	case "networking.k8s.io/v1/ipaddresses":
		return typedOps(net.IPAddresses())
	case "networking.k8s.io/v1/servicecidrs":
		return typedOps(net.ServiceCIDRs())
	case "storage.k8s.io/v1/storageclasses":
		return typedOps(st.StorageClasses())
	case "storage.k8s.io/v1/csidrivers":
		return typedOps(st.CSIDrivers())
	case "storage.k8s.io/v1/csinodes":
		return typedOps(st.CSINodes())
	case "storage.k8s.io/v1/csistoragecapacities":
		return typedOps(st.CSIStorageCapacities(ns))
	case "storage.k8s.io/v1/volumeattachments":
		return typedOps(st.VolumeAttachments())
	case "storage.k8s.io/v1/volumeattributesclasses":
		return typedOps(st.VolumeAttributesClasses())
	case "resource.k8s.io/v1/deviceclasses":
		return typedOps(dra.DeviceClasses())
	case "resource.k8s.io/v1/devicetaintrules":
		return typedOps(dra.DeviceTaintRules())
	case "resource.k8s.io/v1/resourceclaims":
		return typedOps(dra.ResourceClaims(ns))
	case "resource.k8s.io/v1/resourceclaimtemplates":
		return typedOps(dra.ResourceClaimTemplates(ns))
	case "resource.k8s.io/v1/resourceslices":
		return typedOps(dra.ResourceSlices())
	case "admissionregistration.k8s.io/v1/validatingwebhookconfigurations":
		return typedOps(adm.ValidatingWebhookConfigurations())
	case "admissionregistration.k8s.io/v1/mutatingwebhookconfigurations":
		return typedOps(adm.MutatingWebhookConfigurations())
	case "admissionregistration.k8s.io/v1/validatingadmissionpolicies":
		return typedOps(adm.ValidatingAdmissionPolicies())
	case "admissionregistration.k8s.io/v1/validatingadmissionpolicybindings":
		return typedOps(adm.ValidatingAdmissionPolicyBindings())
	case "admissionregistration.k8s.io/v1/mutatingadmissionpolicies":
		return typedOps(adm.MutatingAdmissionPolicies())
	case "admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings":
		return typedOps(adm.MutatingAdmissionPolicyBindings())
	case "flowcontrol.apiserver.k8s.io/v1/flowschemas":
		return typedOps(fc.FlowSchemas())
	case "flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations":
		return typedOps(fc.PriorityLevelConfigurations())
	case "certificates.k8s.io/v1/certificatesigningrequests":
		ops := typedOps(certs.CertificateSigningRequests())
		ops.actions.updateApproval = func(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) (*certificatesv1.CertificateSigningRequest, error) {
			return certs.CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
		}
		return ops
	case "certificates.k8s.io/v1/clustertrustbundles":
		return typedOps(certs.ClusterTrustBundles())
	case "certificates.k8s.io/v1/podcertificaterequests":
		return typedOps(certs.PodCertificateRequests(ns))
	case "authentication.k8s.io/v1/tokenreviews":
		return createOnlyOps(authn.TokenReviews())
	case "authentication.k8s.io/v1/selfsubjectreviews":
		return createOnlyOps(authn.SelfSubjectReviews())
	case "authorization.k8s.io/v1/subjectaccessreviews":
		return createOnlyOps(authz.SubjectAccessReviews())
	case "authorization.k8s.io/v1/localsubjectaccessreviews":
		return createOnlyOps(authz.LocalSubjectAccessReviews(ns))
	case "authorization.k8s.io/v1/selfsubjectaccessreviews":
		return createOnlyOps(authz.SelfSubjectAccessReviews())
	case "authorization.k8s.io/v1/selfsubjectrulesreviews":
		return createOnlyOps(authz.SelfSubjectRulesReviews())
	}
	t.Fatalf("no typed client for %v", c.gvr)
	return crudOps{}
}

// typedCoreOps is the typed clientset's access to a core (v1) resource.
func typedCoreOps(t *testing.T, core corev1Client, c crudCase) crudOps {
	t.Helper()
	ns := crudNamespace
	switch c.gvr.Resource {
	case "namespaces":
		ops := typedOps(core.Namespaces())
		ops.finalize = func(ctx context.Context, n *corev1.Namespace) (*corev1.Namespace, error) {
			return core.Namespaces().Finalize(ctx, n, metav1.UpdateOptions{})
		}
		ops.deleteCollection = restDeleteCollection(core.RESTClient(), "", "namespaces")
		return ops
	case "pods":
		pods := core.Pods(ns)
		ops := typedOps(pods)
		ops.actions.bind = func(ctx context.Context, b *corev1.Binding) error { return pods.Bind(ctx, b, metav1.CreateOptions{}) }
		ops.actions.evict = func(ctx context.Context, e *policyv1.Eviction) error { return pods.EvictV1(ctx, e) }
		ops.actions.updateEphemeral = func(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error) {
			return pods.UpdateEphemeralContainers(ctx, p.Name, p, metav1.UpdateOptions{})
		}
		return ops
	case "services":
		ops := typedOps(core.Services(ns))
		ops.deleteCollection = restDeleteCollection(core.RESTClient(), ns, "services")
		return ops
	case "serviceaccounts":
		sas := core.ServiceAccounts(ns)
		ops := typedOps(sas)
		ops.actions.createToken = func(ctx context.Context, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
			return sas.CreateToken(ctx, name, tr, metav1.CreateOptions{})
		}
		return ops
	case "bindings":
		// client-go has no typed client for bindings (only pods/binding):
		// create through the core group's REST client.
		return crudOps{create: func(ctx context.Context, o runtime.Object) (runtime.Object, error) {
			return nil, core.RESTClient().Post().Namespace(ns).Resource("bindings").Body(o).Do(ctx).Error()
		}}
	case "nodes":
		return typedOps(core.Nodes())
	case "configmaps":
		return typedOps(core.ConfigMaps(ns))
	case "secrets":
		return typedOps(core.Secrets(ns))
	case "events":
		return typedOps(core.Events(ns))
	case "endpoints":
		return typedOps(core.Endpoints(ns))
	case "limitranges":
		return typedOps(core.LimitRanges(ns))
	case "resourcequotas":
		return typedOps(core.ResourceQuotas(ns))
	case "persistentvolumes":
		return typedOps(core.PersistentVolumes())
	case "persistentvolumeclaims":
		return typedOps(core.PersistentVolumeClaims(ns))
	case "podtemplates":
		return typedOps(core.PodTemplates(ns))
	case "replicationcontrollers":
		return typedOps(core.ReplicationControllers(ns))
	case "componentstatuses":
		return typedOps(core.ComponentStatuses())
	}
	t.Fatalf("no typed client for %v", c.gvr)
	return crudOps{}
}

// toUnstructured converts a typed object for the dynamic client.
func toUnstructured(t *testing.T, o runtime.Object) *unstructured.Unstructured {
	gvks, _, err := crudScheme.ObjectKinds(o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvks[0])
	return u
}

// fromUnstructured checks that the dynamic client returned an unstructured
// object of the kind and converts it back.
func fromUnstructured(u *unstructured.Unstructured, kind string, into runtime.Object) error {
	if u.GetKind() != kind {
		return fmt.Errorf("dynamic client returned kind %q, want %q", u.GetKind(), kind)
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}

// dynamicOps is the dynamic client's access to a row's resource.
func dynamicOps(t *testing.T, dc dynamic.Interface, c crudCase) crudOps {
	var ri dynamic.ResourceInterface = dc.Resource(c.gvr)
	if c.namespaced {
		ri = dc.Resource(c.gvr).Namespace(crudNamespace)
	}
	back := func(u *unstructured.Unstructured, err error) (runtime.Object, error) {
		if err != nil {
			return nil, err
		}
		if u.GetKind() == "Status" { // what a create of a binding answers
			st := &metav1.Status{}
			return st, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, st)
		}
		o := c.newObj("", nil)
		if err := fromUnstructured(u, c.kind, o); err != nil {
			return nil, err
		}
		return o, nil
	}
	ops := crudOps{
		create: func(ctx context.Context, o runtime.Object) (runtime.Object, error) {
			return back(ri.Create(ctx, toUnstructured(t, o), metav1.CreateOptions{}))
		},
		get: func(ctx context.Context, name string) (runtime.Object, error) {
			return back(ri.Get(ctx, name, metav1.GetOptions{}))
		},
		list: func(ctx context.Context, opts metav1.ListOptions) ([]runtime.Object, error) {
			l, err := ri.List(ctx, opts)
			if err != nil {
				return nil, err
			}
			if l.GetKind() != c.kind+"List" || l.GetResourceVersion() == "" && c.gvr.Resource != "componentstatuses" {
				return nil, fmt.Errorf("dynamic list: kind %q resourceVersion %q", l.GetKind(), l.GetResourceVersion())
			}
			var out []runtime.Object
			for i := range l.Items {
				o, err := back(&l.Items[i], nil)
				if err != nil {
					return nil, err
				}
				out = append(out, o)
			}
			return out, nil
		},
		update: func(ctx context.Context, o runtime.Object) (runtime.Object, error) {
			return back(ri.Update(ctx, toUnstructured(t, o), metav1.UpdateOptions{}))
		},
		patch: func(ctx context.Context, name string, pt types.PatchType, data []byte) (runtime.Object, error) {
			return back(ri.Patch(ctx, name, pt, data, metav1.PatchOptions{}))
		},
		delete: func(ctx context.Context, name string, opts metav1.DeleteOptions) error {
			return ri.Delete(ctx, name, opts)
		},
		deleteCollection: func(ctx context.Context, opts metav1.DeleteOptions, sel metav1.ListOptions) error {
			return ri.DeleteCollection(ctx, opts, sel)
		},
		finalize: func(ctx context.Context, ns *corev1.Namespace) (*corev1.Namespace, error) {
			u, err := ri.Update(ctx, toUnstructured(t, ns), metav1.UpdateOptions{}, "finalize")
			if err != nil {
				return nil, err
			}
			out := &corev1.Namespace{}
			return out, fromUnstructured(u, "Namespace", out)
		},
	}
	if c.setStatus != nil {
		ops.updateStatus = func(ctx context.Context, o runtime.Object) (runtime.Object, error) {
			return back(ri.UpdateStatus(ctx, toUnstructured(t, o), metav1.UpdateOptions{}))
		}
	}
	ops.getScale = func(ctx context.Context, name string) (*autoscalingv1.Scale, error) {
		u, err := ri.Get(ctx, name, metav1.GetOptions{}, "scale")
		if err != nil {
			return nil, err
		}
		s := &autoscalingv1.Scale{}
		return s, fromUnstructured(u, "Scale", s)
	}
	ops.updateScale = func(ctx context.Context, name string, s *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
		u, err := ri.Update(ctx, toUnstructured(t, s), metav1.UpdateOptions{}, "scale")
		if err != nil {
			return nil, err
		}
		out := &autoscalingv1.Scale{}
		return out, fromUnstructured(u, "Scale", out)
	}
	ops.actions = dynamicActions(t, ri)
	return ops
}

// dynamicActions are the action subresources through the dynamic client:
// a create or an update naming the subresource.
func dynamicActions(t *testing.T, ri dynamic.ResourceInterface) subresourceActions {
	createSub := func(ctx context.Context, in runtime.Object, sub string) (*unstructured.Unstructured, error) {
		return ri.Create(ctx, toUnstructured(t, in), metav1.CreateOptions{}, sub)
	}
	return subresourceActions{
		bind: func(ctx context.Context, b *corev1.Binding) error {
			u, err := createSub(ctx, b, "binding")
			if err == nil && u.GetKind() != "Status" {
				return fmt.Errorf("binding returned kind %q", u.GetKind())
			}
			return err
		},
		evict: func(ctx context.Context, e *policyv1.Eviction) error {
			u, err := createSub(ctx, e, "eviction")
			if err == nil && u.GetKind() != "Status" {
				return fmt.Errorf("eviction returned kind %q", u.GetKind())
			}
			return err
		},
		createToken: func(ctx context.Context, sa string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
			tr = tr.DeepCopy()
			tr.Name = sa
			u, err := createSub(ctx, tr, "token")
			if err != nil {
				return nil, err
			}
			out := &authenticationv1.TokenRequest{}
			return out, fromUnstructured(u, "TokenRequest", out)
		},
		updateApproval: func(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) (*certificatesv1.CertificateSigningRequest, error) {
			u, err := ri.Update(ctx, toUnstructured(t, csr), metav1.UpdateOptions{}, "approval")
			if err != nil {
				return nil, err
			}
			out := &certificatesv1.CertificateSigningRequest{}
			return out, fromUnstructured(u, "CertificateSigningRequest", out)
		},
		updateEphemeral: func(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error) {
			u, err := ri.Update(ctx, toUnstructured(t, p), metav1.UpdateOptions{}, "ephemeralcontainers")
			if err != nil {
				return nil, err
			}
			out := &corev1.Pod{}
			return out, fromUnstructured(u, "Pod", out)
		},
	}
}

// TestClientGoTypedCRUD: the typed clientset does every verb kube-apiserver
// serves on every served resource (row 1).
func TestClientGoTypedCRUD(t *testing.T) {
	cfg := crudTarget(t)
	env, cases := startCRUD(t, cfg)
	for _, c := range cases {
		ops := typedCaseOps(t, env, c)
		t.Run(c.testName(), func(t *testing.T) { exerciseCase(t, env, c, ops) })
	}
}

// TestClientGoDynamicCRUD: the dynamic client does every verb on every
// served resource with unstructured objects (row 2).
func TestClientGoDynamicCRUD(t *testing.T) {
	cfg := crudTarget(t)
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	env, cases := startCRUD(t, cfg)
	for _, c := range cases {
		ops := dynamicOps(t, dc, c)
		t.Run(c.testName(), func(t *testing.T) { exerciseCase(t, env, c, ops) })
	}
	// a status subresource on a kind without one is a 404
	_, err = dc.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(crudNamespace).
		Get(context.Background(), "x", metav1.GetOptions{}, "status")
	if !apierrors.IsNotFound(err) {
		t.Fatalf("configmaps/status: want NotFound, got %v", err)
	}
}
