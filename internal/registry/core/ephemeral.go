package core

import (
	"fmt"
	"reflect"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// pods/ephemeralcontainers is a view of the pod through which only
// spec.ephemeralContainers changes (kubectl debug adds one), with
// kube-apiserver's rules: containers are only added, never changed or
// removed; their names are unique among all the pod's containers; ports,
// resources, probes and lifecycle may not be set; static pods have none.

// mirrorPodAnnotation marks static pods.
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

var ephemeralPath = field.NewPath("spec", "ephemeralContainers")

func ephemeralContainersSubresource() registry.Subresource {
	return registry.Subresource{
		Name: "ephemeralcontainers", Kind: podGVK, Verbs: []string{"get", "patch", "update"},
		Update: strategy.TypedStatus[*corev1.Pod]{
			PrepareUpdate:  prepareEphemeralUpdate,
			ValidateChange: validateEphemeralUpdate,
		},
		ResetFields: [][]string{{"status"}},
	}
}

// prepareEphemeralUpdate keeps everything of old but the ephemeral
// containers, which it defaults as a pod's containers.
func prepareEphemeralUpdate(p, old *corev1.Pod) {
	podspec.DefaultPod(p) // as kube-apiserver defaults the decoded pod
	ecs := p.Spec.EphemeralContainers
	p.Spec = *old.Spec.DeepCopy()
	p.Status = *old.Status.DeepCopy()
	strategy.ResetMetaForStatus(&p.ObjectMeta, &old.ObjectMeta)
	p.Spec.EphemeralContainers = ecs
}

func validateEphemeralUpdate(p, old *corev1.Pod) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&p.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validatePod(p)...)
	errs = append(errs, validateEphemeralContainers(&p.Spec)...)
	if hasAnnotation(old, mirrorPodAnnotation) {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support ephemeral containers")}
	}
	byName := map[string]*corev1.EphemeralContainer{}
	for i := range p.Spec.EphemeralContainers {
		byName[p.Spec.EphemeralContainers[i].Name] = &p.Spec.EphemeralContainers[i]
	}
	for _, o := range old.Spec.EphemeralContainers {
		n, ok := byName[o.Name]
		switch {
		case !ok:
			errs = append(errs, field.Forbidden(ephemeralPath, fmt.Sprintf("existing ephemeral containers %q may not be removed\n", o.Name)))
		case !apiequality.Semantic.DeepEqual(o, *n):
			errs = append(errs, field.Forbidden(ephemeralPath, fmt.Sprintf("existing ephemeral containers %q may not be changed\n%v", o.Name, diff.Diff(internalView{reflect.ValueOf(o)}, internalView{reflect.ValueOf(*n)}))))
		}
	}
	return errs
}

// ephemeralAllowed are the container fields an ephemeral container may
// set (kube-apiserver's allow list); any other set field is forbidden.
var ephemeralAllowed = sets.New("Name", "Image", "Command", "Args", "WorkingDir", "EnvFrom", "Env", "VolumeMounts",
	"VolumeDevices", "TerminationMessagePath", "TerminationMessagePolicy", "ImagePullPolicy", "SecurityContext",
	"Stdin", "StdinOnce", "TTY")

// validateEphemeralContainers checks a pod's ephemeral containers: names
// (DNS labels, unique among every container of the pod), image, enums,
// environment, volume mounts (existing volumes, no subPath), the target
// container, and the fields they may not set.
func validateEphemeralContainers(s *corev1.PodSpec) field.ErrorList {
	var errs field.ErrorList
	others, all := sets.New[string](), sets.New[string]()
	for _, c := range append(append([]corev1.Container(nil), s.Containers...), s.InitContainers...) {
		others.Insert(c.Name)
		all.Insert(c.Name)
	}
	vols := sets.New[string]()
	for _, v := range s.Volumes {
		vols.Insert(v.Name)
	}
	for i := range s.EphemeralContainers {
		ec, p := &s.EphemeralContainers[i], ephemeralPath.Index(i)
		switch {
		case ec.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case all.Has(ec.Name):
			errs = append(errs, field.Duplicate(p.Child("name"), ec.Name))
		default:
			errs = append(errs, strategy.ValidateName(p.Child("name"), ec.Name, validation.IsDNS1123Label)...)
		}
		all.Insert(ec.Name)
		errs = append(errs, validateEphemeralCommon(&ec.EphemeralContainerCommon, vols, p)...)
		if ec.TargetContainerName != "" && !others.Has(ec.TargetContainerName) {
			errs = append(errs, field.NotFound(p.Child("targetContainerName"), ec.TargetContainerName))
		}
		errs = append(errs, forbiddenEphemeralFields(&ec.EphemeralContainerCommon, p)...)
	}
	return errs
}

func validateEphemeralCommon(c *corev1.EphemeralContainerCommon, vols sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Image == "" {
		errs = append(errs, field.Required(p.Child("image"), ""))
	}
	errs = append(errs, strategy.ValidateEnum(p.Child("imagePullPolicy"), c.ImagePullPolicy,
		corev1.PullAlways, corev1.PullNever, corev1.PullIfNotPresent)...)
	errs = append(errs, strategy.ValidateEnum(p.Child("terminationMessagePolicy"), c.TerminationMessagePolicy,
		corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError)...)
	for i, e := range c.Env {
		np := p.Child("env").Index(i).Child("name")
		if e.Name == "" {
			errs = append(errs, field.Required(np, ""))
		}
		errs = append(errs, strategy.ValidateName(np, e.Name, validation.IsRelaxedEnvVarName)...)
	}
	for i, m := range c.VolumeMounts {
		mp := p.Child("volumeMounts").Index(i)
		switch {
		case m.Name == "":
			errs = append(errs, field.Required(mp.Child("name"), ""))
		case !vols.Has(m.Name):
			errs = append(errs, field.NotFound(mp.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(mp.Child("mountPath"), ""))
		}
		if m.SubPath != "" {
			errs = append(errs, field.Forbidden(mp.Child("subPath"), "cannot be set for an Ephemeral Container"))
		}
		if m.SubPathExpr != "" {
			errs = append(errs, field.Forbidden(mp.Child("subPathExpr"), "cannot be set for an Ephemeral Container"))
		}
	}
	return errs
}

// forbiddenEphemeralFields reports every set field of an ephemeral
// container outside the allow list, by its JSON name.
func forbiddenEphemeralFields(c *corev1.EphemeralContainerCommon, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	v := reflect.ValueOf(*c)
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if ephemeralAllowed.Has(f.Name) || v.Field(i).IsZero() {
			continue
		}
		r, n := utf8.DecodeRuneInString(f.Name)
		errs = append(errs, field.Forbidden(p.Child(string(unicode.ToLower(r))+f.Name[n:]), "cannot be set for an Ephemeral Container"))
	}
	return errs
}
