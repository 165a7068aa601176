package podspec

import "testing"

func TestSysctlNamespace(t *testing.T) {
	for name, want := range map[string]string{
		"net.ipv4.ip_forward":              "net",
		"net/ipv4/ip_forward":              "net",
		"net.ipv4.conf.eno2/100.rp_filter": "net",
		"net/ipv4/conf/eno2.100/rp_filter": "net",
		"kernel.shmmax":                    "ipc",
		"kernel.shm_rmid_forced":           "ipc",
		"kernel.shm*":                      "ipc",
		"kernel.msg*":                      "ipc",
		"kernel.shmfoo":                    "",
		"fs.mqueue.msg_max":                "ipc",
		"kernel.domainname":                "uts",
		"user.max_user_namespaces":         "user",
		"kernel.pid_max":                   "",
		"network":                          "",
	} {
		if got := sysctlNamespace(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}
