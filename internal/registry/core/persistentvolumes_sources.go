package core

import (
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// pvSource is one volume source a PersistentVolume may name: the field it
// is reported at when it is one too many, and its own checks (at the path
// kube-apiserver reports them, which is not always the field's).
type pvSource struct {
	name     string
	set      bool
	validate func() field.ErrorList
}

// pvSources lists the sources of a PV spec in kube-apiserver's order.
func pvSources(s *corev1.PersistentVolumeSpec, pvName string, p *field.Path) []pvSource {
	src := &s.PersistentVolumeSource
	return []pvSource{
		{"hostPath", src.HostPath != nil, func() field.ErrorList { return podspec.ValidateHostPath(src.HostPath, p.Child("hostPath")) }},
		{"gcePersistentDisk", src.GCEPersistentDisk != nil, func() field.ErrorList {
			return podspec.ValidateDisk("pdName", src.GCEPersistentDisk.PDName, src.GCEPersistentDisk.Partition, p.Child("persistentDisk"))
		}},
		{"awsElasticBlockStore", src.AWSElasticBlockStore != nil, func() field.ErrorList {
			return podspec.ValidateDisk("volumeID", src.AWSElasticBlockStore.VolumeID, src.AWSElasticBlockStore.Partition, p.Child("awsElasticBlockStore"))
		}},
		{"glusterfs", src.Glusterfs != nil, func() field.ErrorList { return validateGlusterfs(src.Glusterfs, p.Child("glusterfs")) }},
		{"flocker", src.Flocker != nil, func() field.ErrorList { return podspec.ValidateFlocker(src.Flocker, p.Child("flocker")) }},
		{"nfs", src.NFS != nil, func() field.ErrorList { return podspec.ValidateNFS(src.NFS, p.Child("nfs")) }},
		{"rbd", src.RBD != nil, func() field.ErrorList {
			return requireAll(p.Child("rbd"), "monitors", len(src.RBD.CephMonitors) > 0, "image", src.RBD.RBDImage != "")
		}},
		{"quobyte", src.Quobyte != nil, func() field.ErrorList { return podspec.ValidateQuobyte(src.Quobyte, p.Child("quobyte")) }},
		{"cephFS", src.CephFS != nil, func() field.ErrorList {
			return requireAll(p.Child("cephfs"), "monitors", len(src.CephFS.Monitors) > 0)
		}},
		{"iscsi", src.ISCSI != nil, func() field.ErrorList { return validateISCSI(src.ISCSI, pvName, p.Child("iscsi")) }},
		{"cinder", src.Cinder != nil, func() field.ErrorList { return validateCinder(src.Cinder, p.Child("cinder")) }},
		{"fc", src.FC != nil, func() field.ErrorList { return podspec.ValidateFC(src.FC, p.Child("fc")) }},
		// flexVolume: counted, never reported as one too many (as
		// kube-apiserver).
		{"", src.FlexVolume != nil, func() field.ErrorList {
			return podspec.ValidateFlex(src.FlexVolume.Driver, src.FlexVolume.Options, p.Child("flexVolume"))
		}},
		{"azureFile", src.AzureFile != nil, func() field.ErrorList { return validateAzureFile(src.AzureFile, p.Child("azureFile")) }},
		{"vsphereVolume", src.VsphereVolume != nil, func() field.ErrorList {
			return requireAll(p.Child("vsphereVolume"), "volumePath", src.VsphereVolume.VolumePath != "")
		}},
		{"photonPersistentDisk", src.PhotonPersistentDisk != nil, func() field.ErrorList {
			return requireAll(p.Child("photonPersistentDisk"), "pdID", src.PhotonPersistentDisk.PdID != "")
		}},
		{"portworxVolume", src.PortworxVolume != nil, func() field.ErrorList {
			return requireAll(p.Child("portworxVolume"), "volumeID", src.PortworxVolume.VolumeID != "")
		}},
		{"azureDisk", src.AzureDisk != nil, func() field.ErrorList { return podspec.ValidateAzureDisk(src.AzureDisk, p.Child("azureDisk")) }},
		{"scaleIO", src.ScaleIO != nil, func() field.ErrorList {
			sio := src.ScaleIO
			return requireAll(p.Child("scaleIO"), "gateway", sio.Gateway != "", "system", sio.System != "", "volumeName", sio.VolumeName != "")
		}},
		{"local", src.Local != nil, func() field.ErrorList { return validateLocalPath(src.Local.Path, p.Child("local")) }},
		{"storageos", src.StorageOS != nil, func() field.ErrorList { return validateStorageOS(src.StorageOS, p.Child("storageos")) }},
		{"csi", src.CSI != nil, func() field.ErrorList { return validateCSISource(src.CSI, p.Child("csi")) }},
	}
}

// requireAll takes (field name, present) pairs and requires each.
func requireAll(p *field.Path, pairs ...any) field.ErrorList {
	var errs field.ErrorList
	for i := 0; i+1 < len(pairs); i += 2 {
		if !pairs[i+1].(bool) {
			errs = append(errs, field.Required(p.Child(pairs[i].(string)), ""))
		}
	}
	return errs
}

func validateLocalPath(localPath string, p *field.Path) field.ErrorList {
	if localPath == "" {
		return field.ErrorList{field.Required(p.Child("path"), "")}
	}
	return podspec.ValidateNoBacksteps(localPath, p.Child("path"))
}

func validateGlusterfs(g *corev1.GlusterfsPersistentVolumeSource, p *field.Path) field.ErrorList {
	errs := requireAll(p, "endpoints", g.EndpointsName != "", "path", g.Path != "")
	if ns := g.EndpointsNamespace; ns != nil {
		if *ns == "" {
			errs = append(errs, field.Invalid(p.Child("endpointsNamespace"), *ns, "if the endpointnamespace is set, it must be a valid namespace name"))
		}
		errs = append(errs, validateNameWith(p.Child("endpointsNamespace"), *ns, apivalidation.ValidateNamespaceName)...)
	}
	return errs
}

// validateNameWith checks a non-empty name with an apimachinery name
// function.
func validateNameWith(p *field.Path, name string, fn apivalidation.ValidateNameFunc) field.ErrorList {
	if name == "" {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range fn(name, false) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

func validateISCSI(s *corev1.ISCSIPersistentVolumeSource, pvName string, p *field.Path) field.ErrorList {
	errs := requireAll(p, "targetPortal", s.TargetPortal != "")
	if s.InitiatorName != nil && len(pvName+":"+s.TargetPortal) > 64 {
		errs = append(errs, field.Invalid(p.Child("targetportal"), s.TargetPortal,
			"Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified."))
	}
	if s.IQN == "" {
		errs = append(errs, field.Required(p.Child("iqn"), ""))
	} else if !podspec.ISCSINameValid(s.IQN) {
		errs = append(errs, field.Invalid(p.Child("iqn"), s.IQN, "must be valid format"))
	}
	if s.Lun < 0 || s.Lun > 255 {
		errs = append(errs, field.Invalid(p.Child("lun"), s.Lun, validation.InclusiveRangeError(0, 255)))
	}
	if (s.DiscoveryCHAPAuth || s.SessionCHAPAuth) && s.SecretRef == nil {
		errs = append(errs, field.Required(p.Child("secretRef"), ""))
	}
	if s.SecretRef != nil && s.SecretRef.Name == "" {
		errs = append(errs, field.Required(p.Child("secretRef", "name"), ""))
	}
	if s.InitiatorName != nil && !podspec.ISCSINameValid(*s.InitiatorName) {
		errs = append(errs, field.Invalid(p.Child("initiatorname"), *s.InitiatorName, "must be valid format"))
	}
	return errs
}

func validateCinder(c *corev1.CinderPersistentVolumeSource, p *field.Path) field.ErrorList {
	errs := requireAll(p, "volumeID", c.VolumeID != "")
	if c.SecretRef != nil {
		errs = append(errs, requireAll(p.Child("secretRef"), "name", c.SecretRef.Name != "", "namespace", c.SecretRef.Namespace != "")...)
	}
	return errs
}

func validateAzureFile(a *corev1.AzureFilePersistentVolumeSource, p *field.Path) field.ErrorList {
	errs := requireAll(p, "secretName", a.SecretName != "", "shareName", a.ShareName != "")
	if a.SecretNamespace != nil && *a.SecretNamespace == "" {
		errs = append(errs, field.Required(p.Child("secretNamespace"), ""))
	}
	return errs
}

func validateStorageOS(s *corev1.StorageOSPersistentVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.VolumeName == "" {
		errs = append(errs, field.Required(p.Child("volumeName"), ""))
	} else {
		errs = append(errs, strategy.ValidateName(p.Child("volumeName"), s.VolumeName, validation.IsDNS1123Label)...)
	}
	errs = append(errs, strategy.ValidateName(p.Child("volumeNamespace"), s.VolumeNamespace, validation.IsDNS1123Label)...)
	if s.SecretRef != nil {
		errs = append(errs, requireAll(p.Child("secretRef"), "name", s.SecretRef.Name != "", "namespace", s.SecretRef.Namespace != "")...)
	}
	return errs
}

func validateCSISource(c *corev1.CSIPersistentVolumeSource, p *field.Path) field.ErrorList {
	errs := podspec.ValidateCSIDriverName(c.Driver, p.Child("driver"))
	errs = append(errs, requireAll(p, "volumeHandle", c.VolumeHandle != "")...)
	for _, ref := range []struct {
		name string
		ref  *corev1.SecretReference
	}{
		{"controllerPublishSecretRef", c.ControllerPublishSecretRef}, {"controllerExpandSecretRef", c.ControllerExpandSecretRef},
		{"nodePublishSecretRef", c.NodePublishSecretRef}, {"nodeExpandSecretRef", c.NodeExpandSecretRef},
	} {
		if ref.ref != nil {
			errs = append(errs, validatePVSecretReference(ref.ref, p.Child(ref.name))...)
		}
	}
	return errs
}

func validatePVSecretReference(ref *corev1.SecretReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		errs = append(errs, strategy.ValidateName(p.Child("name"), ref.Name, validation.IsDNS1123Subdomain)...)
	}
	if ref.Namespace == "" {
		errs = append(errs, field.Required(p.Child("namespace"), ""))
	} else {
		errs = append(errs, strategy.ValidateName(p.Child("namespace"), ref.Namespace, validation.IsDNS1123Label)...)
	}
	return errs
}
