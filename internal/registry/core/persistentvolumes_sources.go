package core

import (
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// source is a podspec.Source.
func source(name string, set bool, validate func() field.ErrorList) podspec.Source {
	return podspec.Source{Name: name, Set: set, Validate: validate}
}

// pvSources lists the sources of a PV spec in kube-apiserver's order.
func pvSources(s *corev1.PersistentVolumeSpec, pvName string, p *field.Path) []podspec.Source {
	src := &s.PersistentVolumeSource
	return []podspec.Source{
		source("hostPath", src.HostPath != nil, func() field.ErrorList { return podspec.ValidateHostPath(src.HostPath, p.Child("hostPath")) }),
		source("gcePersistentDisk", src.GCEPersistentDisk != nil, func() field.ErrorList {
			return podspec.ValidateDisk("pdName", src.GCEPersistentDisk.PDName, src.GCEPersistentDisk.Partition, p.Child("persistentDisk"))
		}),
		source("awsElasticBlockStore", src.AWSElasticBlockStore != nil, func() field.ErrorList {
			return podspec.ValidateDisk("volumeID", src.AWSElasticBlockStore.VolumeID, src.AWSElasticBlockStore.Partition, p.Child("awsElasticBlockStore"))
		}),
		source("glusterfs", src.Glusterfs != nil, func() field.ErrorList { return validateGlusterfs(src.Glusterfs, p.Child("glusterfs")) }),
		source("flocker", src.Flocker != nil, func() field.ErrorList { return podspec.ValidateFlocker(src.Flocker, p.Child("flocker")) }),
		source("nfs", src.NFS != nil, func() field.ErrorList { return podspec.ValidateNFS(src.NFS, p.Child("nfs")) }),
		source("rbd", src.RBD != nil, func() field.ErrorList {
			return podspec.RequireAll(p.Child("rbd"), "monitors", len(src.RBD.CephMonitors) > 0, "image", src.RBD.RBDImage != "")
		}),
		source("quobyte", src.Quobyte != nil, func() field.ErrorList { return podspec.ValidateQuobyte(src.Quobyte, p.Child("quobyte")) }),
		source("cephFS", src.CephFS != nil, func() field.ErrorList {
			return podspec.RequireAll(p.Child("cephfs"), "monitors", len(src.CephFS.Monitors) > 0)
		}),
		source("iscsi", src.ISCSI != nil, func() field.ErrorList { return validateISCSI(src.ISCSI, pvName, p.Child("iscsi")) }),
		source("cinder", src.Cinder != nil, func() field.ErrorList { return validateCinder(src.Cinder, p.Child("cinder")) }),
		source("fc", src.FC != nil, func() field.ErrorList { return podspec.ValidateFC(src.FC, p.Child("fc")) }),
		// flexVolume: counted, never reported as one too many (as
		// kube-apiserver).
		source("", src.FlexVolume != nil, func() field.ErrorList {
			return podspec.ValidateFlex(src.FlexVolume.Driver, src.FlexVolume.Options, p.Child("flexVolume"))
		}),
		source("azureFile", src.AzureFile != nil, func() field.ErrorList { return validateAzureFile(src.AzureFile, p.Child("azureFile")) }),
		source("vsphereVolume", src.VsphereVolume != nil, func() field.ErrorList {
			return podspec.RequireAll(p.Child("vsphereVolume"), "volumePath", src.VsphereVolume.VolumePath != "")
		}),
		source("photonPersistentDisk", src.PhotonPersistentDisk != nil, func() field.ErrorList {
			return podspec.RequireAll(p.Child("photonPersistentDisk"), "pdID", src.PhotonPersistentDisk.PdID != "")
		}),
		source("portworxVolume", src.PortworxVolume != nil, func() field.ErrorList {
			return podspec.RequireAll(p.Child("portworxVolume"), "volumeID", src.PortworxVolume.VolumeID != "")
		}),
		source("azureDisk", src.AzureDisk != nil, func() field.ErrorList { return podspec.ValidateAzureDisk(src.AzureDisk, p.Child("azureDisk")) }),
		source("scaleIO", src.ScaleIO != nil, func() field.ErrorList {
			sio := src.ScaleIO
			return podspec.RequireAll(p.Child("scaleIO"), "gateway", sio.Gateway != "", "system", sio.System != "", "volumeName", sio.VolumeName != "")
		}),
		source("local", src.Local != nil, func() field.ErrorList { return validateLocalPath(src.Local.Path, p.Child("local")) }),
		source("storageos", src.StorageOS != nil, func() field.ErrorList { return validateStorageOS(src.StorageOS, p.Child("storageos")) }),
		source("csi", src.CSI != nil, func() field.ErrorList { return validateCSISource(src.CSI, p.Child("csi")) }),
	}
}

func validateLocalPath(localPath string, p *field.Path) field.ErrorList {
	if localPath == "" {
		return field.ErrorList{field.Required(p.Child("path"), "")}
	}
	return podspec.ValidateNoBacksteps(localPath, p.Child("path"))
}

func validateGlusterfs(g *corev1.GlusterfsPersistentVolumeSource, p *field.Path) field.ErrorList {
	errs := podspec.RequireAll(p, "endpoints", g.EndpointsName != "", "path", g.Path != "")
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
	errs := podspec.RequireAll(p, "targetPortal", s.TargetPortal != "")
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
	errs := podspec.RequireAll(p, "volumeID", c.VolumeID != "")
	if c.SecretRef != nil {
		errs = append(errs, podspec.RequireAll(p.Child("secretRef"), "name", c.SecretRef.Name != "", "namespace", c.SecretRef.Namespace != "")...)
	}
	return errs
}

func validateAzureFile(a *corev1.AzureFilePersistentVolumeSource, p *field.Path) field.ErrorList {
	errs := podspec.RequireAll(p, "secretName", a.SecretName != "", "shareName", a.ShareName != "")
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
		errs = append(errs, podspec.RequireAll(p.Child("secretRef"), "name", s.SecretRef.Name != "", "namespace", s.SecretRef.Namespace != "")...)
	}
	return errs
}

func validateCSISource(c *corev1.CSIPersistentVolumeSource, p *field.Path) field.ErrorList {
	errs := podspec.ValidateCSIDriverName(c.Driver, p.Child("driver"))
	errs = append(errs, podspec.RequireAll(p, "volumeHandle", c.VolumeHandle != "")...)
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
