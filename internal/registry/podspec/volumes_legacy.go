package podspec

import (
	"net"
	"path"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// The checks of the network and cloud volume sources a pod may still
// name directly (most of them in-tree plugins Kubernetes has removed or
// migrated to CSI; the API server checks them all the same).

// ValidateDisk requires a cloud disk's ID (idField names it) and a
// partition of 0 to 255; kube-apiserver's message names 1 as the lower
// bound all the same.
func ValidateDisk(idField, id string, partition int32, p *field.Path) field.ErrorList {
	errs := RequireAll(p, idField, id != "")
	if partition < 0 || partition > 255 {
		errs = append(errs, field.Invalid(p.Child("partition"), partition, validation.InclusiveRangeError(1, 255)))
	}
	return errs
}

// ValidateNFS requires a server and an absolute path.
func ValidateNFS(nfs *corev1.NFSVolumeSource, p *field.Path) field.ErrorList {
	errs := RequireAll(p, "server", nfs.Server != "", "path", nfs.Path != "")
	if !path.IsAbs(nfs.Path) {
		errs = append(errs, field.Invalid(p.Child("path"), nfs.Path, "must be an absolute path"))
	}
	return errs
}

// The formats of an iSCSI qualified name (IQN) or initiator name, by its
// prefix.
var (
	iscsiIQN = regexp.MustCompile(`iqn\.\d{4}-\d{2}\.([[:alnum:]-.]+)(:[^,;*&$|\s]+)$`)
	iscsiEUI = regexp.MustCompile(`^eui.[[:alnum:]]{16}$`)
	iscsiNAA = regexp.MustCompile(`^naa.[[:alnum:]]{32}$`)
)

// iscsiNameErrors checks an IQN or initiator name of a pod's volume: it
// must start with iqn, eui or naa, and then match that format.
func iscsiNameErrors(name string, p *field.Path) field.ErrorList {
	switch {
	case !strings.HasPrefix(name, "iqn") && !strings.HasPrefix(name, "eui") && !strings.HasPrefix(name, "naa"):
		return field.ErrorList{field.Invalid(p, name, "must be valid format starting with iqn, eui, or naa")}
	case !ISCSINameValid(name):
		return field.ErrorList{field.Invalid(p, name, "must be valid format")}
	}
	return nil
}

// ISCSINameValid reports whether an IQN or initiator name starts with
// iqn, eui or naa and matches that format.
func ISCSINameValid(name string) bool {
	switch {
	case strings.HasPrefix(name, "iqn"):
		return iscsiIQN.MatchString(name)
	case strings.HasPrefix(name, "eui"):
		return iscsiEUI.MatchString(name)
	case strings.HasPrefix(name, "naa"):
		return iscsiNAA.MatchString(name)
	}
	return false
}

// validateISCSI requires a target portal and a well-formed IQN, a LUN of
// 0 to 255, a secret for CHAP authentication, and a well-formed
// initiator name when one is given (reported at "initiatorname").
func validateISCSI(s *corev1.ISCSIVolumeSource, p *field.Path) field.ErrorList {
	errs := RequireAll(p, "targetPortal", s.TargetPortal != "")
	if s.IQN == "" {
		errs = append(errs, field.Required(p.Child("iqn"), ""))
	} else {
		errs = append(errs, iscsiNameErrors(s.IQN, p.Child("iqn"))...)
	}
	if s.Lun < 0 || s.Lun > 255 {
		errs = append(errs, field.Invalid(p.Child("lun"), s.Lun, validation.InclusiveRangeError(0, 255)))
	}
	if (s.DiscoveryCHAPAuth || s.SessionCHAPAuth) && s.SecretRef == nil {
		errs = append(errs, field.Required(p.Child("secretRef"), ""))
	}
	if s.InitiatorName != nil {
		errs = append(errs, iscsiNameErrors(*s.InitiatorName, p.Child("initiatorname"))...)
	}
	return errs
}

// validateISCSIName limits "<volume name>:<target portal>" to 64
// characters when the volume names an initiator; the error is the
// volume's name's (p is the volume's path).
func validateISCSIName(vol *corev1.Volume, p *field.Path) field.ErrorList {
	s := vol.ISCSI
	if s.InitiatorName == nil || len(vol.Name+":"+s.TargetPortal) <= 64 {
		return nil
	}
	return field.ErrorList{field.Invalid(p.Child("name"), vol.Name,
		"Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.")}
}

// ValidateFlocker requires exactly one of a dataset name (without '/')
// and a dataset UUID.
func ValidateFlocker(f *corev1.FlockerVolumeSource, p *field.Path) field.ErrorList {
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

// validateCinder requires a volume ID, and a name for the secret when
// one is referenced.
func validateCinder(c *corev1.CinderVolumeSource, p *field.Path) field.ErrorList {
	errs := RequireAll(p, "volumeID", c.VolumeID != "")
	if c.SecretRef != nil {
		errs = append(errs, RequireAll(p.Child("secretRef"), "name", c.SecretRef.Name != "")...)
	}
	return errs
}

// ValidateQuobyte requires a registry of host:port pairs (one error per
// bad pair), a tenant of at most 64 characters (checked only with a
// registry) and a volume.
func ValidateQuobyte(q *corev1.QuobyteVolumeSource, p *field.Path) field.ErrorList {
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
	return append(errs, RequireAll(p, "volume", q.Volume != "")...)
}

// ValidateFC requires target WWNs (with a LUN of 0 to 255) or WWIDs, not
// both.
func ValidateFC(fc *corev1.FCVolumeSource, p *field.Path) field.ErrorList {
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

// ValidateFlex requires a flexVolume's driver (of a pod's volume or a
// PersistentVolume) and refuses options in the kubernetes.io and k8s.io
// namespaces (in key order; kube-apiserver's follows its map's).
func ValidateFlex(driver string, options map[string]string, p *field.Path) field.ErrorList {
	errs := RequireAll(p, "driver", driver != "")
	for _, k := range strategy.SortedKeys(options) {
		ns := k
		if before, _, ok := strings.Cut(k, "/"); ok {
			ns = before
		}
		if n := "." + strings.ToLower(ns); strings.HasSuffix(n, ".kubernetes.io") || strings.HasSuffix(n, ".k8s.io") {
			errs = append(errs, field.Invalid(p.Child("options").Key(k), k, "kubernetes.io and k8s.io namespaces are reserved"))
		}
	}
	return errs
}

// The caching modes and kinds an Azure disk may name.
var (
	azureCachingModes = sets.New(corev1.AzureDataDiskCachingNone, corev1.AzureDataDiskCachingReadOnly, corev1.AzureDataDiskCachingReadWrite)
	azureDiskKinds    = sets.New(corev1.AzureSharedBlobDisk, corev1.AzureDedicatedBlobDisk, corev1.AzureManagedDisk)
)

// ValidateAzureDisk requires a disk name and URI, a known caching mode
// and kind, and a URI of the kind's form.
func ValidateAzureDisk(a *corev1.AzureDiskVolumeSource, p *field.Path) field.ErrorList {
	errs := RequireAll(p, "diskName", a.DiskName != "", "diskURI", a.DataDiskURI != "")
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

// validateStorageOS requires a volume name that is a DNS label, a DNS
// label for the namespace when one is given, and a name for the secret
// when one is referenced.
func validateStorageOS(s *corev1.StorageOSVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.VolumeName == "" {
		errs = append(errs, field.Required(p.Child("volumeName"), ""))
	} else {
		errs = append(errs, strategy.Check(p.Child("volumeName"), s.VolumeName, validation.IsDNS1123Label)...)
	}
	errs = append(errs, strategy.ValidateName(p.Child("volumeNamespace"), s.VolumeNamespace, validation.IsDNS1123Label)...)
	if s.SecretRef != nil {
		errs = append(errs, RequireAll(p.Child("secretRef"), "name", s.SecretRef.Name != "")...)
	}
	return errs
}

// defaultLegacySources fills in the declared defaults of the sources
// that have them, as kube-apiserver does: an RBD pool, user and keyring,
// an iSCSI interface, an Azure disk's caching mode, file system, read-only
// flag and kind, and a ScaleIO storage mode and file system.
func defaultLegacySources(vs *corev1.VolumeSource) {
	if r := vs.RBD; r != nil {
		setIfEmpty(&r.RBDPool, "rbd")
		setIfEmpty(&r.RadosUser, "admin")
		setIfEmpty(&r.Keyring, "/etc/ceph/keyring")
	}
	if i := vs.ISCSI; i != nil {
		setIfEmpty(&i.ISCSIInterface, "default")
	}
	if a := vs.AzureDisk; a != nil {
		DefaultAzureDisk(a)
	}
	if s := vs.ScaleIO; s != nil {
		setIfEmpty(&s.StorageMode, "ThinProvisioned")
		setIfEmpty(&s.FSType, "xfs")
	}
}

func setIfEmpty(s *string, v string) {
	if *s == "" {
		*s = v
	}
}

// DefaultAzureDisk fills in an Azure disk's declared defaults (of a pod's
// volume or a PersistentVolume): read-write caching, ext4, not read-only,
// a shared blob disk.
func DefaultAzureDisk(a *corev1.AzureDiskVolumeSource) {
	if a.CachingMode == nil {
		a.CachingMode = new(corev1.AzureDataDiskCachingReadWrite)
	}
	if a.FSType == nil {
		a.FSType = new("ext4")
	}
	if a.ReadOnly == nil {
		a.ReadOnly = new(false)
	}
	if a.Kind == nil {
		a.Kind = new(corev1.AzureSharedBlobDisk)
	}
}
