package podspec

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// volumeSources lists the sources of a pod volume in kube-apiserver's
// order; vol is the volume (its name is part of two checks) and pod the
// pod's name ("" for a template).
func volumeSources(vol *corev1.Volume, pod string, p *field.Path) []Source {
	vs := &vol.VolumeSource
	return append(earlierSources(vs, p), laterSources(vol, pod, p)...)
}

// earlierSources are the sources from emptyDir to downwardAPI in
// kube-apiserver's order; the rest follow in laterSources.
func earlierSources(vs *corev1.VolumeSource, p *field.Path) []Source {
	return []Source{
		{"emptyDir", vs.EmptyDir != nil, func() field.ErrorList { return validateEmptyDir(vs.EmptyDir, p.Child("emptyDir")) }},
		{"hostPath", vs.HostPath != nil, func() field.ErrorList { return ValidateHostPath(vs.HostPath, p.Child("hostPath")) }},
		{"gitRepo", vs.GitRepo != nil, func() field.ErrorList { return validateGitRepo(vs.GitRepo, p.Child("gitRepo")) }},
		{"gcePersistentDisk", vs.GCEPersistentDisk != nil, func() field.ErrorList {
			d := vs.GCEPersistentDisk
			return ValidateDisk("pdName", d.PDName, d.Partition, p.Child("persistentDisk"))
		}},
		{"awsElasticBlockStore", vs.AWSElasticBlockStore != nil, func() field.ErrorList {
			d := vs.AWSElasticBlockStore
			return ValidateDisk("volumeID", d.VolumeID, d.Partition, p.Child("awsElasticBlockStore"))
		}},
		{"secret", vs.Secret != nil, func() field.ErrorList { return validateSecretVolume(vs.Secret, p.Child("secret")) }},
		{"nfs", vs.NFS != nil, func() field.ErrorList { return ValidateNFS(vs.NFS, p.Child("nfs")) }},
		{"iscsi", vs.ISCSI != nil, func() field.ErrorList { return validateISCSI(vs.ISCSI, p.Child("iscsi")) }},
		{"glusterfs", vs.Glusterfs != nil, func() field.ErrorList {
			return RequireAll(p.Child("glusterfs"), "endpoints", vs.Glusterfs.EndpointsName != "", "path", vs.Glusterfs.Path != "")
		}},
		{"flocker", vs.Flocker != nil, func() field.ErrorList { return ValidateFlocker(vs.Flocker, p.Child("flocker")) }},
		{"persistentVolumeClaim", vs.PersistentVolumeClaim != nil, func() field.ErrorList {
			return RequireAll(p.Child("persistentVolumeClaim"), "claimName", vs.PersistentVolumeClaim.ClaimName != "")
		}},
		{"rbd", vs.RBD != nil, func() field.ErrorList {
			return RequireAll(p.Child("rbd"), "monitors", len(vs.RBD.CephMonitors) > 0, "image", vs.RBD.RBDImage != "")
		}},
		{"cinder", vs.Cinder != nil, func() field.ErrorList { return validateCinder(vs.Cinder, p.Child("cinder")) }},
		{"cephFS", vs.CephFS != nil, func() field.ErrorList {
			return RequireAll(p.Child("cephfs"), "monitors", len(vs.CephFS.Monitors) > 0)
		}},
		{"quobyte", vs.Quobyte != nil, func() field.ErrorList { return ValidateQuobyte(vs.Quobyte, p.Child("quobyte")) }},
		{"downwarAPI", vs.DownwardAPI != nil, func() field.ErrorList {
			return validateDownwardAPIVolume(vs.DownwardAPI, p.Child("downwardAPI"))
		}},
	}
}

// laterSources are the sources after downwardAPI, in kube-apiserver's
// order.
func laterSources(vol *corev1.Volume, pod string, p *field.Path) []Source {
	vs := &vol.VolumeSource
	return []Source{
		{"fc", vs.FC != nil, func() field.ErrorList { return ValidateFC(vs.FC, p.Child("fc")) }},
		{"flexVolume", vs.FlexVolume != nil, func() field.ErrorList {
			return ValidateFlex(vs.FlexVolume.Driver, vs.FlexVolume.Options, p.Child("flexVolume"))
		}},
		{"configMap", vs.ConfigMap != nil, func() field.ErrorList { return validateConfigMapVolume(vs.ConfigMap, p.Child("configMap")) }},
		{"azureFile", vs.AzureFile != nil, func() field.ErrorList {
			return RequireAll(p.Child("azureFile"), "secretName", vs.AzureFile.SecretName != "", "shareName", vs.AzureFile.ShareName != "")
		}},
		{"vsphereVolume", vs.VsphereVolume != nil, func() field.ErrorList {
			return RequireAll(p.Child("vsphereVolume"), "volumePath", vs.VsphereVolume.VolumePath != "")
		}},
		{"photonPersistentDisk", vs.PhotonPersistentDisk != nil, func() field.ErrorList {
			return RequireAll(p.Child("photonPersistentDisk"), "pdID", vs.PhotonPersistentDisk.PdID != "")
		}},
		{"portworxVolume", vs.PortworxVolume != nil, func() field.ErrorList {
			return RequireAll(p.Child("portworxVolume"), "volumeID", vs.PortworxVolume.VolumeID != "")
		}},
		{"azureDisk", vs.AzureDisk != nil, func() field.ErrorList { return ValidateAzureDisk(vs.AzureDisk, p.Child("azureDisk")) }},
		{"storageos", vs.StorageOS != nil, func() field.ErrorList { return validateStorageOS(vs.StorageOS, p.Child("storageos")) }},
		{"projected", vs.Projected != nil, func() field.ErrorList { return validateProjected(vs.Projected, p.Child("projected")) }},
		{"scaleIO", vs.ScaleIO != nil, func() field.ErrorList {
			sio := vs.ScaleIO
			return RequireAll(p.Child("scaleIO"), "gateway", sio.Gateway != "", "system", sio.System != "", "volumeName", sio.VolumeName != "")
		}},
		{"csi", vs.CSI != nil, func() field.ErrorList { return validateCSI(vs.CSI, p.Child("csi")) }},
		{"ephemeral", vs.Ephemeral != nil, func() field.ErrorList { return validateEphemeral(vs.Ephemeral, vol.Name, pod, p) }},
		{"image", vs.Image != nil, func() field.ErrorList { return validateImageVolume(vs.Image, p.Child("image")) }},
	}
}

// validateVolumeSource requires exactly one source and checks it. As
// kube-apiserver does, it checks the first source the volume sets (in
// volumeSources' order) and refuses each further one at that source's
// own field; an iSCSI volume with an initiator name also limits the
// length of the volume's name and target portal.
func validateVolumeSource(vol *corev1.Volume, pod string, p *field.Path) field.ErrorList {
	return ValidateSources(volumeSources(vol, pod, p), p, func(src Source, _ bool) field.ErrorList {
		if src.Name == "iscsi" {
			return validateISCSIName(vol, p)
		}
		return nil
	})
}

// validateEmptyDir refuses a negative size limit. The mode is not
// checked: its gate (EmptyDirVolumeMode) is off by default, so
// DropDisabledFields clears it before validation.
func validateEmptyDir(e *corev1.EmptyDirVolumeSource, p *field.Path) field.ErrorList {
	if e.SizeLimit != nil && e.SizeLimit.Cmp(resource.Quantity{}) < 0 {
		return field.ErrorList{field.Forbidden(p.Child("sizeLimit"), "SizeLimit field must be a valid resource quantity")}
	}
	return nil
}

// hostPathTypes are the types a hostPath volume may name ("" is none).
var hostPathTypes = sets.New(corev1.HostPathUnset, corev1.HostPathDirectoryOrCreate, corev1.HostPathDirectory,
	corev1.HostPathFileOrCreate, corev1.HostPathFile, corev1.HostPathSocket, corev1.HostPathCharDev, corev1.HostPathBlockDev)

// ValidateHostPath requires a path (and stops without one), refuses a
// ".." element in it and an unknown type.
func ValidateHostPath(h *corev1.HostPathVolumeSource, p *field.Path) field.ErrorList {
	if h.Path == "" {
		return field.ErrorList{field.Required(p.Child("path"), "")}
	}
	errs := ValidateNoBacksteps(h.Path, p.Child("path"))
	if h.Type != nil && !hostPathTypes.Has(*h.Type) {
		errs = append(errs, field.NotSupported(p.Child("type"), h.Type, sets.List(hostPathTypes)))
	}
	return errs
}

// ValidateNoBacksteps refuses a path with a ".." element (one error
// however many there are).
func ValidateNoBacksteps(target string, p *field.Path) field.ErrorList {
	for _, part := range strings.Split(filepath.ToSlash(target), "/") {
		if part == ".." {
			return field.ErrorList{field.Invalid(p, target, "must not contain '..'")}
		}
	}
	return nil
}

// validateGitRepo requires a repository and a relative directory without
// ".." elements.
func validateGitRepo(g *corev1.GitRepoVolumeSource, p *field.Path) field.ErrorList {
	errs := RequireAll(p, "repository", g.Repository != "")
	dp := p.Child("directory")
	if path.IsAbs(g.Directory) {
		errs = append(errs, field.Invalid(dp, g.Directory, "must be a relative path"))
	}
	return append(errs, ValidateNoBacksteps(g.Directory, dp)...)
}

// validateSecretVolume requires the secret's name, then checks the
// default mode and each item.
func validateSecretVolume(s *corev1.SecretVolumeSource, p *field.Path) field.ErrorList {
	errs := RequireAll(p, "secretName", s.SecretName != "")
	errs = append(errs, validateFileMode(s.DefaultMode, p.Child("defaultMode"))...)
	return append(errs, validateKeysToPaths(s.Items, p.Child("items"))...)
}

// validateConfigMapVolume requires the config map's name, then checks
// the default mode and each item.
func validateConfigMapVolume(c *corev1.ConfigMapVolumeSource, p *field.Path) field.ErrorList {
	errs := RequireAll(p, "name", c.Name != "")
	errs = append(errs, validateFileMode(c.DefaultMode, p.Child("defaultMode"))...)
	return append(errs, validateKeysToPaths(c.Items, p.Child("items"))...)
}

// validateKeysToPaths checks the items of a secret or config map volume:
// each needs a key and a local path, and a mode in range. (The key's
// format is not checked here, unlike a projected source's.)
func validateKeysToPaths(items []corev1.KeyToPath, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range items {
		kp, ip := &items[i], p.Index(i)
		errs = append(errs, RequireAll(ip, "key", kp.Key != "", "path", kp.Path != "")...)
		errs = append(errs, validateLocalPath(kp.Path, ip.Child("path"))...)
		errs = append(errs, validateFileMode(kp.Mode, ip.Child("mode"))...)
	}
	return errs
}

// validateDownwardAPIVolume checks the default mode, then each file.
// kube-apiserver reports a file's errors under the volume's own path
// (downwardAPI.path, not downwardAPI.items[i].path), so they are here
// too.
func validateDownwardAPIVolume(d *corev1.DownwardAPIVolumeSource, p *field.Path) field.ErrorList {
	errs := validateFileMode(d.DefaultMode, p.Child("defaultMode"))
	for i := range d.Items {
		errs = append(errs, validateDownwardAPIFile(&d.Items[i], p)...)
	}
	return errs
}

// validateCSI checks a CSI volume's driver name and the name of its
// node-publish secret; kube-apiserver reports a malformed secret name at
// csi.name.
func validateCSI(c *corev1.CSIVolumeSource, p *field.Path) field.ErrorList {
	errs := ValidateCSIDriverName(c.Driver, p.Child("driver"))
	if ref := c.NodePublishSecretRef; ref != nil {
		if ref.Name == "" {
			errs = append(errs, field.Required(p.Child("nodePublishSecretRef", "name"), ""))
		} else {
			errs = append(errs, strategy.Check(p.Child("name"), ref.Name, validation.IsDNS1123Subdomain)...)
		}
	}
	return errs
}

// ValidateCSIDriverName requires a driver name of at most 63 characters
// that is a DNS subdomain once lower-cased.
func ValidateCSIDriverName(driver string, p *field.Path) field.ErrorList {
	if driver == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if len(driver) > 63 {
		errs = append(errs, field.TooLong(p, "", 63))
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(driver)) {
		errs = append(errs, field.Invalid(p, driver, msg))
	}
	return errs
}

// pullPolicies are the pull policies an image volume may name.
var pullPolicies = []string{string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever)}

// validateImageVolume requires a reference and a known pull policy (the
// defaults fill an empty one in from the reference, so an empty one is
// seen only when defaulting was skipped).
func validateImageVolume(img *corev1.ImageVolumeSource, p *field.Path) field.ErrorList {
	errs := RequireAll(p, "reference", img.Reference != "")
	switch pp := p.Child("pullPolicy"); img.PullPolicy {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	case "":
		errs = append(errs, field.Required(pp, ""))
	default:
		errs = append(errs, field.NotSupported(pp, img.PullPolicy, pullPolicies))
	}
	return errs
}

// validateEphemeral requires a claim template and checks it as
// kube-apiserver checks a claim template: labels and annotations only in
// its metadata, its spec as a claim's. For a pod (pod is its name) the
// claim it will make, <pod>-<volume>, must be a valid claim name, with a
// template or without.
func validateEphemeral(e *corev1.EphemeralVolumeSource, volume, pod string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	tp := p.Child("ephemeral", "volumeClaimTemplate")
	if t := e.VolumeClaimTemplate; t == nil {
		errs = append(errs, field.Required(tp, ""))
	} else {
		errs = append(errs, strategy.ValidateTemplateMeta(&t.ObjectMeta, tp.Child("metadata"))...)
		errs = append(errs, ValidateClaimSpec(&t.Spec, tp.Child("spec"))...)
	}
	if pod == "" || volume == "" {
		return errs
	}
	claim := pod + "-" + volume
	for _, msg := range validation.IsDNS1123Subdomain(claim) {
		errs = append(errs, field.Invalid(p.Child("name"), volume, fmt.Sprintf("PVC name %q: %v", claim, msg)))
	}
	return errs
}
