package podspec

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DeprecatedPlugins are the volume plugins kube-apiserver warns of in pod
// volumes and PersistentVolumes, by field name, with its wording of when
// they were deprecated and stopped working.
var DeprecatedPlugins = map[string]string{
	"photonPersistentDisk": "deprecated in v1.11, non-functional in v1.16+",
	"gitRepo":              "deprecated in v1.11, and disabled by default in v1.33+",
	"scaleIO":              "deprecated in v1.16, non-functional in v1.22+",
	"flocker":              "deprecated in v1.22, non-functional in v1.25+",
	"storageOS":            "deprecated in v1.22, non-functional in v1.25+",
	"quobyte":              "deprecated in v1.22, non-functional in v1.25+",
	"glusterfs":            "deprecated in v1.25, non-functional in v1.26+",
	"cephfs":               "deprecated in v1.28, non-functional in v1.31+",
	"rbd":                  "deprecated in v1.28, non-functional in v1.31+",
}

// volumeWarnings warns of volume plugins that are deprecated or removed
// (the gitRepo driver is off, locked, in v1.37) and of an ephemeral
// volume's claim template asking for fractional bytes.
func volumeWarnings(vols []corev1.Volume, vp *field.Path) []string {
	var out []string
	for i, v := range vols {
		p := vp.Index(i)
		for _, d := range []struct {
			set  bool
			name string
		}{
			{v.PhotonPersistentDisk != nil, "photonPersistentDisk"},
			{v.GitRepo != nil, "gitRepo"},
			{v.ScaleIO != nil, "scaleIO"},
			{v.Flocker != nil, "flocker"},
			{v.StorageOS != nil, "storageOS"},
			{v.Quobyte != nil, "quobyte"},
			{v.Glusterfs != nil, "glusterfs"},
		} {
			if d.set {
				out = append(out, fmt.Sprintf("%s: %s", p.Child(d.name), DeprecatedPlugins[d.name]))
			}
		}
		if e := v.Ephemeral; e != nil && e.VolumeClaimTemplate != nil {
			out = append(out, ClaimSpecWarnings(&e.VolumeClaimTemplate.Spec, p.Child("ephemeral", "volumeClaimTemplate", "spec"))...)
		}
		if v.CephFS != nil {
			out = append(out, fmt.Sprintf("%s: %s", p.Child("cephfs"), DeprecatedPlugins["cephfs"]))
		}
		if v.RBD != nil {
			out = append(out, fmt.Sprintf("%s: %s", p.Child("rbd"), DeprecatedPlugins["rbd"]))
		}
	}
	return out
}

// sourcedPath is a file path a volume writes, with where it comes from
// ("" inside a single-source volume).
type sourcedPath struct{ path, source string }

func (s sourcedPath) String() string {
	if s.source == "" {
		return fmt.Sprintf("%q", s.path)
	}
	return fmt.Sprintf("%q (%s)", s.path, s.source)
}

// overlappingPathWarnings warns of volumes writing two files at the same
// path, or one inside the other: the items of a config map, secret or
// downward API volume, and every file of a projected volume's sources
// (and of projected sources that are empty).
func overlappingPathWarnings(vols []corev1.Volume) []string {
	var out []string
	warn := func(v corev1.Volume, desc, body string) {
		out = append(out, fmt.Sprintf("volume %q (%s): overlapping paths: %s", v.Name, desc, body))
	}
	for _, v := range vols {
		switch {
		case v.ConfigMap != nil && v.ConfigMap.Items != nil:
			for _, o := range overlaps(keyPaths(v.ConfigMap.Items, "")) {
				warn(v, fmt.Sprintf("ConfigMap %q", v.ConfigMap.Name), o)
			}
		case v.Secret != nil && v.Secret.Items != nil:
			for _, o := range overlaps(keyPaths(v.Secret.Items, "")) {
				warn(v, fmt.Sprintf("Secret %q", v.Secret.SecretName), o)
			}
		case v.DownwardAPI != nil && v.DownwardAPI.Items != nil:
			for _, o := range overlaps(fieldPaths(v.DownwardAPI.Items, "")) {
				warn(v, "DownwardAPI", o)
			}
		case v.Projected != nil:
			var all []sourcedPath
			for _, src := range v.Projected.Sources {
				if src == (corev1.VolumeProjection{}) {
					out = append(out, fmt.Sprintf("volume %q (Projected) has no sources provided", v.Name))
					continue
				}
				for _, sp := range projectionPaths(src) {
					sp.path = strings.TrimRight(sp.path, "/")
					for _, c := range collisions(all, sp) {
						warn(v, "Projected", fmt.Sprintf("%s with %s", sp, c))
					}
					all = append(all, sp)
				}
			}
		}
	}
	return out
}

// projectionPaths are the files one projected source writes.
func projectionPaths(src corev1.VolumeProjection) []sourcedPath {
	switch {
	case src.ConfigMap != nil && src.ConfigMap.Items != nil:
		return keyPaths(src.ConfigMap.Items, fmt.Sprintf("ConfigMap %q", src.ConfigMap.Name))
	case src.Secret != nil && src.Secret.Items != nil:
		return keyPaths(src.Secret.Items, fmt.Sprintf("Secret %q", src.Secret.Name))
	case src.DownwardAPI != nil && src.DownwardAPI.Items != nil:
		return fieldPaths(src.DownwardAPI.Items, "DownwardAPI")
	case src.ServiceAccountToken != nil:
		return []sourcedPath{{src.ServiceAccountToken.Path, "ServiceAccountToken"}}
	case src.ClusterTrustBundle != nil:
		b := src.ClusterTrustBundle
		name := ""
		if b.Name != nil {
			name = *b.Name
		} else if b.SignerName != nil {
			name = *b.SignerName
		}
		return []sourcedPath{{b.Path, fmt.Sprintf("ClusterTrustBundle %q", name)}}
	case src.PodCertificate != nil:
		var out []sourcedPath
		for _, f := range []struct{ path, what string }{
			{src.PodCertificate.CertificateChainPath, "PodCertificate chain"},
			{src.PodCertificate.KeyPath, "PodCertificate key"},
			{src.PodCertificate.CredentialBundlePath, "PodCertificate credential bundle"},
		} {
			if f.path != "" {
				out = append(out, sourcedPath{f.path, f.what})
			}
		}
		return out
	}
	return nil
}

func keyPaths(items []corev1.KeyToPath, source string) []sourcedPath {
	out := make([]sourcedPath, 0, len(items))
	for _, it := range items {
		out = append(out, sourcedPath{it.Path, source})
	}
	return out
}

func fieldPaths(items []corev1.DownwardAPIVolumeFile, source string) []sourcedPath {
	out := make([]sourcedPath, 0, len(items))
	for _, it := range items {
		out = append(out, sourcedPath{it.Path, source})
	}
	return out
}

// overlaps describes each path of paths that collides with an earlier one.
func overlaps(paths []sourcedPath) []string {
	var out []string
	var seen []sourcedPath
	for _, sp := range paths {
		sp.path = strings.TrimRight(sp.path, "/")
		for _, c := range collisions(seen, sp) {
			out = append(out, fmt.Sprintf("%s with %s", sp, c))
		}
		seen = append(seen, sp)
	}
	return out
}

// collisions are the paths of seen that p equals or that contain p or lie
// inside it (empty paths collide with nothing).
func collisions(seen []sourcedPath, p sourcedPath) []sourcedPath {
	if p.path == "" {
		return nil
	}
	var out []sourcedPath
	for _, s := range seen {
		switch {
		case s.path == "":
		case s == p,
			strings.HasPrefix(s.path+"/", p.path+"/"),
			strings.HasPrefix(p.path+"/", s.path+"/"):
			out = append(out, s)
		}
	}
	return out
}
