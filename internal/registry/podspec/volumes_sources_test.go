package podspec

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// volumeErrors validates vols as the volumes of the pod named pod ("" for
// a template) and returns the errors as kube-apiserver words them.
func volumeErrors(vols []corev1.Volume, pod string) []string {
	_, errs := validateVolumes(vols, pod, field.NewPath("spec", "volumes"))
	got := make([]string, len(errs))
	for i, e := range errs {
		got[i] = e.Error()
	}
	return got
}

// TestValidateVolumeSources: each rule of a volume source gives the error
// kube-apiserver v1.37.2 gives (internal/registry/core's reference cases
// "volume sources: …" hold its answers to whole pods).
func TestValidateVolumeSources(t *testing.T) {
	const v = "spec.volumes[0]"
	for name, tc := range map[string]struct {
		vs   corev1.VolumeSource
		want []string
	}{
		"secret: name, mode, items": {
			corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{DefaultMode: new(int32(0o1000)),
				Items: []corev1.KeyToPath{{}, {Key: "a", Path: "/a", Mode: new(int32(-1))}, {Key: "b", Path: "..b"}}}},
			[]string{
				v + ".secret.secretName: Required value",
				v + ".secret.defaultMode: Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive",
				v + ".secret.items[0].key: Required value",
				v + ".secret.items[0].path: Required value",
				v + `.secret.items[1].path: Invalid value: "/a": must be a relative path`,
				v + ".secret.items[1].mode: Invalid value: -1: must be a number between 0 and 0777 (octal), both inclusive",
				v + `.secret.items[2].path: Invalid value: "..b": must not start with '..'`,
			},
		},
		"configMap: name, items": {
			corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{Items: []corev1.KeyToPath{{Key: "k", Path: "a/../b"}}}},
			[]string{
				v + ".configMap.name: Required value",
				v + `.configMap.items[0].path: Invalid value: "a/../b": must not contain '..'`,
			},
		},
		"downwardAPI: files reported on the volume's path": {
			corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{DefaultMode: new(int32(-1)),
				Items: []corev1.DownwardAPIVolumeFile{{Path: "x"}}}},
			[]string{
				v + ".downwardAPI.defaultMode: Invalid value: -1: must be a number between 0 and 0777 (octal), both inclusive",
				v + ".downwardAPI: Required value: one of fieldRef and resourceFieldRef is required",
			},
		},
		"hostPath: no path": {
			corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Type: new(corev1.HostPathType("Bogus"))}},
			[]string{v + ".hostPath.path: Required value"},
		},
		"hostPath: backstep and type": {
			corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/a/../b", Type: new(corev1.HostPathType("Bogus"))}},
			[]string{
				v + `.hostPath.path: Invalid value: "/a/../b": must not contain '..'`,
				v + `.hostPath.type: Unsupported value: "Bogus": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"`,
			},
		},
		"emptyDir: negative size limit": {
			corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: new(resource.MustParse("-1"))}},
			[]string{v + ".emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity"},
		},
		"persistentVolumeClaim: no claim": {
			corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{}},
			[]string{v + ".persistentVolumeClaim.claimName: Required value"},
		},
		"gitRepo: repository, directory": {
			corev1.VolumeSource{GitRepo: &corev1.GitRepoVolumeSource{Directory: "/a/.."}},
			[]string{
				v + ".gitRepo.repository: Required value",
				v + `.gitRepo.directory: Invalid value: "/a/..": must be a relative path`,
				v + `.gitRepo.directory: Invalid value: "/a/..": must not contain '..'`,
			},
		},
		"image: reference, pull policy": {
			corev1.VolumeSource{Image: &corev1.ImageVolumeSource{PullPolicy: "Sometimes"}},
			[]string{
				v + ".image.reference: Required value",
				v + `.image.pullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"`,
			},
		},
		"csi: driver, secret name at csi.name": {
			corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: strings.Repeat("d", 64),
				NodePublishSecretRef: &corev1.LocalObjectReference{Name: "Bad"}}},
			[]string{
				v + ".csi.driver: Too long: may not be more than 63 bytes",
				v + `.csi.name: Invalid value: "Bad": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			},
		},
		"nfs: server, absolute path": {
			corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Path: "rel"}},
			[]string{v + ".nfs.server: Required value", v + `.nfs.path: Invalid value: "rel": must be an absolute path`},
		},
		"iscsi: portal, names, lun, CHAP secret": {
			corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{IQN: "foo", Lun: 256, SessionCHAPAuth: true, InitiatorName: new("eui.1")}},
			[]string{
				v + ".iscsi.targetPortal: Required value",
				v + `.iscsi.iqn: Invalid value: "foo": must be valid format starting with iqn, eui, or naa`,
				v + ".iscsi.lun: Invalid value: 256: must be between 0 and 255, inclusive",
				v + ".iscsi.secretRef: Required value",
				v + `.iscsi.initiatorname: Invalid value: "eui.1": must be valid format`,
			},
		},
		"fc: targets and lun": {
			corev1.VolumeSource{FC: &corev1.FCVolumeSource{TargetWWNs: []string{"a"}, WWIDs: []string{"b"}}},
			[]string{
				v + `.fc.targetWWNs: Invalid value: ["a"]: targetWWNs and wwids can not be specified simultaneously`,
				v + ".fc.lun: Required value: lun is required if targetWWNs is specified",
			},
		},
		"glusterfs: endpoints and path": {
			corev1.VolumeSource{Glusterfs: &corev1.GlusterfsVolumeSource{}},
			[]string{v + ".glusterfs.endpoints: Required value", v + ".glusterfs.path: Required value"},
		},
		"cinder: volume and secret names": {
			corev1.VolumeSource{Cinder: &corev1.CinderVolumeSource{SecretRef: &corev1.LocalObjectReference{}}},
			[]string{v + ".cinder.volumeID: Required value", v + ".cinder.secretRef.name: Required value"},
		},
		"flocker: both names": {
			corev1.VolumeSource{Flocker: &corev1.FlockerVolumeSource{DatasetName: "a/b", DatasetUUID: "u"}},
			[]string{
				v + `.flocker: Invalid value: "resource": datasetName and datasetUUID can not be specified simultaneously`,
				v + `.flocker.datasetName: Invalid value: "a/b": must not contain '/'`,
			},
		},
		"flexVolume: driver, reserved options in key order": {
			corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Options: map[string]string{"x.k8s.io": "", "kubernetes.io/a": "", "example.com/b": ""}}},
			[]string{
				v + ".flexVolume.driver: Required value",
				v + `.flexVolume.options[kubernetes.io/a]: Invalid value: "kubernetes.io/a": kubernetes.io and k8s.io namespaces are reserved`,
				v + `.flexVolume.options[x.k8s.io]: Invalid value: "x.k8s.io": kubernetes.io and k8s.io namespaces are reserved`,
			},
		},
		"azureDisk: managed disk URI": {
			corev1.VolumeSource{AzureDisk: &corev1.AzureDiskVolumeSource{DiskName: "d", DataDiskURI: "https://x", Kind: new(corev1.AzureManagedDisk)}},
			[]string{v + `.azureDisk.diskURI: Unsupported value: "https://x": supported values: "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"`},
		},
		"scaleIO: all required": {
			corev1.VolumeSource{ScaleIO: &corev1.ScaleIOVolumeSource{}},
			[]string{v + ".scaleIO.gateway: Required value", v + ".scaleIO.system: Required value", v + ".scaleIO.volumeName: Required value"},
		},
		"storageos: names": {
			corev1.VolumeSource{StorageOS: &corev1.StorageOSVolumeSource{VolumeName: "v", VolumeNamespace: "Bad", SecretRef: &corev1.LocalObjectReference{}}},
			[]string{
				v + `.storageos.volumeNamespace: Invalid value: "Bad": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
				v + ".storageos.secretRef.name: Required value",
			},
		},
		"quobyte: one error per bad registry pair": {
			corev1.VolumeSource{Quobyte: &corev1.QuobyteVolumeSource{Registry: "a,b:1,c"}},
			[]string{
				v + `.quobyte.registry: Invalid value: "a,b:1,c": must be a host:port pair or multiple pairs separated by commas`,
				v + `.quobyte.registry: Invalid value: "a,b:1,c": must be a host:port pair or multiple pairs separated by commas`,
				v + ".quobyte.volume: Required value",
			},
		},
		"gcePersistentDisk: reported at persistentDisk": {
			corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{Partition: 256}},
			[]string{v + ".persistentDisk.pdName: Required value", v + ".persistentDisk.partition: Invalid value: 256: must be between 1 and 255, inclusive"},
		},
		"awsElasticBlockStore": {
			corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{Partition: -1}},
			[]string{v + ".awsElasticBlockStore.volumeID: Required value", v + ".awsElasticBlockStore.partition: Invalid value: -1: must be between 1 and 255, inclusive"},
		},
		"azureFile: secret and share": {
			corev1.VolumeSource{AzureFile: &corev1.AzureFileVolumeSource{}},
			[]string{v + ".azureFile.secretName: Required value", v + ".azureFile.shareName: Required value"},
		},
		"two sources: the second refused at its own field": {
			corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}, HostPath: &corev1.HostPathVolumeSource{}},
			[]string{v + ".hostPath: Forbidden: may not specify more than 1 volume type"},
		},
		"two sources: the first one checked, kube's spellings": {
			corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{}, DownwardAPI: &corev1.DownwardAPIVolumeSource{}, ConfigMap: &corev1.ConfigMapVolumeSource{}},
			[]string{
				v + ".cephfs.monitors: Required value",
				v + ".downwarAPI: Forbidden: may not specify more than 1 volume type",
				v + ".configMap: Forbidden: may not specify more than 1 volume type",
			},
		},
		"no source": {corev1.VolumeSource{}, []string{v + ": Required value: must specify a volume type"}},
	} {
		t.Run(name, func(t *testing.T) {
			got := volumeErrors([]corev1.Volume{{Name: "v", VolumeSource: tc.vs}}, "")
			if !slices.Equal(got, tc.want) {
				t.Errorf("errors\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestValidateISCSIVolumeName: with an initiator name, the volume's name
// and the target portal together may not pass 64 characters, even when
// iSCSI is a volume's second source.
func TestValidateISCSIVolumeName(t *testing.T) {
	iscsi := &corev1.ISCSIVolumeSource{TargetPortal: strings.Repeat("t", 63), IQN: "iqn.2001-04.com.example:s",
		InitiatorName: new("iqn.2001-04.com.example:n")}
	got := volumeErrors([]corev1.Volume{
		{Name: "a", VolumeSource: corev1.VolumeSource{ISCSI: iscsi}},
		{Name: "b", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/p"}, ISCSI: iscsi}},
		{Name: "", VolumeSource: corev1.VolumeSource{ISCSI: iscsi}},
	}, "")
	const msg = "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified."
	want := []string{
		`spec.volumes[0].name: Invalid value: "a": ` + msg,
		"spec.volumes[1].iscsi: Forbidden: may not specify more than 1 volume type",
		`spec.volumes[1].name: Invalid value: "b": ` + msg,
		"spec.volumes[2].name: Required value",
	}
	if !slices.Equal(got, want) {
		t.Errorf("errors\n%q\nwant\n%q", got, want)
	}
}

// TestValidateEphemeralVolumes: a claim template is required and checked
// as a claim's; a pod's claims (<pod>-<volume>) must be valid names, and
// no volume of the pod may mount one of them as a claim. A template's
// volumes make no claims yet.
func TestValidateEphemeralVolumes(t *testing.T) {
	ok := &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}}
	bad := &corev1.PersistentVolumeClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{"a": "b"}},
		Spec:       corev1.PersistentVolumeClaimSpec{VolumeMode: new(corev1.PersistentVolumeMode("Bad"))},
	}
	pod := strings.Repeat("p", 250)
	vols := []corev1.Volume{
		{Name: "none", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
		{Name: "bad", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: bad}}},
		{Name: "ok", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: ok}}},
		{Name: "claim", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pod + "-ok"}}},
	}
	const tp = ".ephemeral.volumeClaimTemplate"
	long := func(i int, vol string) string {
		return `spec.volumes[` + string(rune('0'+i)) + `].name: Invalid value: "` + vol + `": PVC name "` + pod + "-" + vol + `": must be no more than 253 characters`
	}
	templateErrs := []string{
		"spec.volumes[0]" + tp + ": Required value",
		"spec.volumes[1]" + tp + ".metadata.name: Forbidden: cannot be set",
		"spec.volumes[1]" + tp + ".spec.accessModes: Required value: at least 1 access mode is required",
		"spec.volumes[1]" + tp + ".spec.resources[storage]: Required value",
		"spec.volumes[1]" + tp + `.spec.volumeMode: Unsupported value: "Bad": supported values: "Block", "Filesystem"`,
	}
	t.Run("template", func(t *testing.T) {
		if got := volumeErrors(vols, ""); !slices.Equal(got, templateErrs) {
			t.Errorf("errors\n%q\nwant\n%q", got, templateErrs)
		}
	})
	t.Run("pod", func(t *testing.T) {
		want := []string{templateErrs[0], long(0, "none")}
		want = append(want, templateErrs[1:]...)
		want = append(want, long(1, "bad"),
			`spec.volumes[3].persistentVolumeClaim.claimName: Invalid value: "`+pod+`-ok": must not reference a PVC that gets created for an ephemeral volume`)
		if got := volumeErrors(vols, pod); !slices.Equal(got, want) {
			t.Errorf("errors\n%q\nwant\n%q", got, want)
		}
	})
}

// TestDropEmptyDirMode: the mode of an emptyDir volume is dropped (its
// gate is alpha) unless the old pod already has one.
func TestDropEmptyDirMode(t *testing.T) {
	spec := func() *corev1.PodSpec {
		return &corev1.PodSpec{Volumes: []corev1.Volume{{Name: "e", VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{Mode: new(int32(0o700))}}}}}
	}
	s := spec()
	DropDisabledFields(s, nil)
	if m := s.Volumes[0].EmptyDir.Mode; m != nil {
		t.Errorf("create kept mode %o", *m)
	}
	s = spec()
	DropDisabledFields(s, spec())
	if s.Volumes[0].EmptyDir.Mode == nil {
		t.Error("update dropped the mode the old pod has")
	}
}
