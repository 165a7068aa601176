package core

import (
	"net"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

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
		{"hostPath", src.HostPath != nil, func() field.ErrorList { return validateHostPathSource(src.HostPath, p.Child("hostPath")) }},
		{"gcePersistentDisk", src.GCEPersistentDisk != nil, func() field.ErrorList {
			return validateDiskID(src.GCEPersistentDisk.PDName, "pdName", src.GCEPersistentDisk.Partition, p.Child("persistentDisk"))
		}},
		{"awsElasticBlockStore", src.AWSElasticBlockStore != nil, func() field.ErrorList {
			return validateDiskID(src.AWSElasticBlockStore.VolumeID, "volumeID", src.AWSElasticBlockStore.Partition, p.Child("awsElasticBlockStore"))
		}},
		{"glusterfs", src.Glusterfs != nil, func() field.ErrorList { return validateGlusterfs(src.Glusterfs, p.Child("glusterfs")) }},
		{"flocker", src.Flocker != nil, func() field.ErrorList { return validateFlocker(src.Flocker, p.Child("flocker")) }},
		{"nfs", src.NFS != nil, func() field.ErrorList { return validateNFS(src.NFS, p.Child("nfs")) }},
		{"rbd", src.RBD != nil, func() field.ErrorList {
			return requireAll(p.Child("rbd"), "monitors", len(src.RBD.CephMonitors) > 0, "image", src.RBD.RBDImage != "")
		}},
		{"quobyte", src.Quobyte != nil, func() field.ErrorList { return validateQuobyte(src.Quobyte, p.Child("quobyte")) }},
		{"cephFS", src.CephFS != nil, func() field.ErrorList {
			return requireAll(p.Child("cephfs"), "monitors", len(src.CephFS.Monitors) > 0)
		}},
		{"iscsi", src.ISCSI != nil, func() field.ErrorList { return validateISCSI(src.ISCSI, pvName, p.Child("iscsi")) }},
		{"cinder", src.Cinder != nil, func() field.ErrorList { return validateCinder(src.Cinder, p.Child("cinder")) }},
		{"fc", src.FC != nil, func() field.ErrorList { return validateFC(src.FC, p.Child("fc")) }},
		// flexVolume: counted, never reported as one too many (as
		// kube-apiserver).
		{"", src.FlexVolume != nil, func() field.ErrorList { return validateFlex(src.FlexVolume, p.Child("flexVolume")) }},
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
		{"azureDisk", src.AzureDisk != nil, func() field.ErrorList { return validateAzureDisk(src.AzureDisk, p.Child("azureDisk")) }},
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

var hostPathTypes = sets.New(corev1.HostPathUnset, corev1.HostPathDirectoryOrCreate, corev1.HostPathDirectory,
	corev1.HostPathFileOrCreate, corev1.HostPathFile, corev1.HostPathSocket, corev1.HostPathCharDev, corev1.HostPathBlockDev)

func validateHostPathSource(h *corev1.HostPathVolumeSource, p *field.Path) field.ErrorList {
	if h.Path == "" {
		return field.ErrorList{field.Required(p.Child("path"), "")}
	}
	errs := validateNoBacksteps(h.Path, p.Child("path"))
	if h.Type != nil && !hostPathTypes.Has(*h.Type) {
		errs = append(errs, field.NotSupported(p.Child("type"), h.Type, sets.List(hostPathTypes)))
	}
	return errs
}

// validateNoBacksteps refuses a path with a ".." element.
func validateNoBacksteps(target string, p *field.Path) field.ErrorList {
	for _, part := range strings.Split(filepath.ToSlash(target), "/") {
		if part == ".." {
			return field.ErrorList{field.Invalid(p, target, "must not contain '..'")}
		}
	}
	return nil
}

func validateLocalPath(localPath string, p *field.Path) field.ErrorList {
	if localPath == "" {
		return field.ErrorList{field.Required(p.Child("path"), "")}
	}
	return validateNoBacksteps(localPath, p.Child("path"))
}

func validateNFS(nfs *corev1.NFSVolumeSource, p *field.Path) field.ErrorList {
	errs := requireAll(p, "server", nfs.Server != "", "path", nfs.Path != "")
	if !path.IsAbs(nfs.Path) {
		errs = append(errs, field.Invalid(p.Child("path"), nfs.Path, "must be an absolute path"))
	}
	return errs
}

func validateDiskID(id, idField string, partition int32, p *field.Path) field.ErrorList {
	errs := requireAll(p, idField, id != "")
	if partition < 0 || partition > 255 {
		errs = append(errs, field.Invalid(p.Child("partition"), partition, validation.InclusiveRangeError(1, 255)))
	}
	return errs
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

func validateFlocker(f *corev1.FlockerVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if f.DatasetName == "" && f.DatasetUUID == "" {
		errs = append(errs, field.Required(p, "one of datasetName and datasetUUID is required"))
	}
	if f.DatasetName != "" && f.DatasetUUID != "" {
		errs = append(errs, field.Invalid(p, "resource", "datasetName and datasetUUID can not be specified simultaneously"))
	}
	if strings.Contains(f.DatasetName, "/") {
		errs = append(errs, field.Invalid(p.Child("datasetName"), f.DatasetName, "must not contain '/'"))
	}
	return errs
}

func validateQuobyte(q *corev1.QuobyteVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	const registryMsg = "must be a host:port pair or multiple pairs separated by commas"
	switch {
	case q.Registry == "":
		errs = append(errs, field.Required(p.Child("registry"), registryMsg))
	case len(q.Tenant) >= 65:
		errs = append(errs, field.Required(p.Child("tenant"), "must be a UUID and may not exceed a length of 64 characters"))
	default:
		for _, pair := range strings.Split(q.Registry, ",") {
			if _, _, err := net.SplitHostPort(pair); err != nil {
				errs = append(errs, field.Invalid(p.Child("registry"), q.Registry, registryMsg))
			}
		}
	}
	return append(errs, requireAll(p, "volume", q.Volume != "")...)
}

var (
	iscsiIQN = regexp.MustCompile(`iqn\.\d{4}-\d{2}\.([[:alnum:]-.]+)(:[^,;*&$|\s]+)$`)
	iscsiEUI = regexp.MustCompile(`^eui.[[:alnum:]]{16}$`)
	iscsiNAA = regexp.MustCompile(`^naa.[[:alnum:]]{32}$`)
)

// iscsiNameValid checks an IQN or initiator name: iqn., eui. or naa.
// followed by what each format requires.
func iscsiNameValid(s string) bool {
	switch {
	case strings.HasPrefix(s, "iqn"):
		return iscsiIQN.MatchString(s)
	case strings.HasPrefix(s, "eui"):
		return iscsiEUI.MatchString(s)
	case strings.HasPrefix(s, "naa"):
		return iscsiNAA.MatchString(s)
	}
	return false
}

func validateISCSI(s *corev1.ISCSIPersistentVolumeSource, pvName string, p *field.Path) field.ErrorList {
	errs := requireAll(p, "targetPortal", s.TargetPortal != "")
	if s.InitiatorName != nil && len(pvName+":"+s.TargetPortal) > 64 {
		errs = append(errs, field.Invalid(p.Child("targetportal"), s.TargetPortal,
			"Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified."))
	}
	if s.IQN == "" {
		errs = append(errs, field.Required(p.Child("iqn"), ""))
	} else if !iscsiNameValid(s.IQN) {
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
	if s.InitiatorName != nil && !iscsiNameValid(*s.InitiatorName) {
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

func validateFC(fc *corev1.FCVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(fc.TargetWWNs) == 0 && len(fc.WWIDs) == 0 {
		errs = append(errs, field.Required(p.Child("targetWWNs"), "must specify either targetWWNs or wwids, but not both"))
	}
	if len(fc.TargetWWNs) != 0 && len(fc.WWIDs) != 0 {
		errs = append(errs, field.Invalid(p.Child("targetWWNs"), fc.TargetWWNs, "targetWWNs and wwids can not be specified simultaneously"))
	}
	if len(fc.TargetWWNs) != 0 {
		switch {
		case fc.Lun == nil:
			errs = append(errs, field.Required(p.Child("lun"), "lun is required if targetWWNs is specified"))
		case *fc.Lun < 0 || *fc.Lun > 255:
			errs = append(errs, field.Invalid(p.Child("lun"), fc.Lun, validation.InclusiveRangeError(0, 255)))
		}
	}
	return errs
}

func validateFlex(f *corev1.FlexPersistentVolumeSource, p *field.Path) field.ErrorList {
	errs := requireAll(p, "driver", f.Driver != "")
	for _, k := range strategy.SortedKeys(f.Options) {
		ns := k
		if parts := strings.SplitN(k, "/", 2); len(parts) == 2 {
			ns = parts[0]
		}
		if n := "." + strings.ToLower(ns); strings.HasSuffix(n, ".kubernetes.io") || strings.HasSuffix(n, ".k8s.io") {
			errs = append(errs, field.Invalid(p.Child("options").Key(k), k, "kubernetes.io and k8s.io namespaces are reserved"))
		}
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

var (
	azureCachingModes = sets.New(corev1.AzureDataDiskCachingNone, corev1.AzureDataDiskCachingReadOnly, corev1.AzureDataDiskCachingReadWrite)
	azureDiskKinds    = sets.New(corev1.AzureSharedBlobDisk, corev1.AzureDedicatedBlobDisk, corev1.AzureManagedDisk)
)

func validateAzureDisk(a *corev1.AzureDiskVolumeSource, p *field.Path) field.ErrorList {
	errs := requireAll(p, "diskName", a.DiskName != "", "diskURI", a.DataDiskURI != "")
	if a.CachingMode != nil && !azureCachingModes.Has(*a.CachingMode) {
		errs = append(errs, field.NotSupported(p.Child("cachingMode"), *a.CachingMode, sets.List(azureCachingModes)))
	}
	if a.Kind == nil {
		return errs
	}
	if !azureDiskKinds.Has(*a.Kind) {
		errs = append(errs, field.NotSupported(p.Child("kind"), *a.Kind, sets.List(azureDiskKinds)))
	}
	switch managed := *a.Kind == corev1.AzureManagedDisk; {
	case managed && !strings.HasPrefix(a.DataDiskURI, "/subscriptions/"):
		errs = append(errs, field.NotSupported(p.Child("diskURI"), a.DataDiskURI,
			[]string{"/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"}))
	case !managed && !strings.HasPrefix(a.DataDiskURI, "https://"):
		errs = append(errs, field.NotSupported(p.Child("diskURI"), a.DataDiskURI,
			[]string{"https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"}))
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
	errs := validateCSIDriverName(c.Driver, p.Child("driver"))
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

func validateCSIDriverName(driver string, p *field.Path) field.ErrorList {
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
