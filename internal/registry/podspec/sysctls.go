package podspec

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A sysctl name is dot- (or slash-) separated segments of lower-case
// alphanumerics, '-' and '_' that start and end alphanumeric, at most
// sysctlMaxLength long: kube-apiserver's rule, worded as it words it.
const (
	sysctlSegment   = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
	sysctlMaxLength = 253
)

var sysctlName = regexp.MustCompile("^(" + sysctlSegment + "[\\./])*" + sysctlSegment + "$")

// validateSysctls checks the pod's sysctls: each named validly, once, and
// none of the network (IPC) namespace when the pod shares the host's
// network (IPC) namespace, where setting it would change the node's.
func validateSysctls(s *corev1.PodSpec, p *field.Path) field.ErrorList {
	if s.SecurityContext == nil {
		return nil
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, sc := range s.SecurityContext.Sysctls {
		np := p.Index(i).Child("name")
		switch {
		case sc.Name == "":
			errs = append(errs, field.Required(np, ""))
		case len(sc.Name) > sysctlMaxLength || !sysctlName.MatchString(sc.Name):
			errs = append(errs, field.Invalid(np, sc.Name, fmt.Sprintf("must have at most %d characters and match regex %s",
				sysctlMaxLength, sysctlName.String())))
		case seen[sc.Name]:
			errs = append(errs, field.Duplicate(np, sc.Name))
		}
		switch ns := sysctlNamespace(sc.Name); {
		case s.HostNetwork && ns == "net":
			errs = append(errs, field.Invalid(np, sc.Name, "may not be specified when 'hostNetwork' is true"))
		case s.HostIPC && ns == "ipc":
			errs = append(errs, field.Invalid(np, sc.Name, "may not be specified when 'hostIPC' is true"))
		}
		seen[sc.Name] = true
	}
	return errs
}

// sysctlNamespace is the kernel namespace a sysctl belongs to, as the
// kubelet classifies it: "ipc" for the System V IPC limits and POSIX
// message queues, "net" for the network stack, "uts" and "user" for
// theirs, "" for the node-wide rest. A name whose first separator is '/'
// uses '/' and '.' the other way round ("net/ipv4/conf/eno2.100/rp_filter");
// a trailing "*" names a prefix.
func sysctlNamespace(name string) string {
	if i := strings.IndexAny(name, "./"); i >= 0 && name[i] == '/' {
		name = strings.Map(func(r rune) rune {
			switch r {
			case '.':
				return '/'
			case '/':
				return '.'
			}
			return r
		}, name)
	}
	if i := strings.IndexByte(name, '*'); i >= 0 {
		name = name[:i]
	}
	if ns, ok := sysctlNamespaces[name]; ok {
		return ns
	}
	for prefix, ns := range sysctlNamespacePrefixes {
		if strings.HasPrefix(name, prefix+".") {
			return ns
		}
	}
	return ""
}

// sysctlNamespaces are the single sysctls (and the kernel.shm/kernel.msg
// prefixes) of a namespace; sysctlNamespacePrefixes the trees.
var (
	sysctlNamespaces = map[string]string{
		"kernel.domainname": "uts",
		"kernel.sem":        "ipc",
		"kernel.shmall":     "ipc", "kernel.shmmax": "ipc", "kernel.shmmni": "ipc", "kernel.shm_rmid_forced": "ipc", "kernel.shm": "ipc",
		"kernel.msgmax": "ipc", "kernel.msgmnb": "ipc", "kernel.msgmni": "ipc", "kernel.msg": "ipc",
	}
	sysctlNamespacePrefixes = map[string]string{"net": "net", "fs.mqueue": "ipc", "user": "user"}
)
