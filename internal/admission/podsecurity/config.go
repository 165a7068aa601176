package podsecurity

import (
	"fmt"
	"strings"

	machinery "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// ConfigGroup is the API group of the PodSecurityConfiguration kind,
// served in versions v1, v1beta1 and v1alpha1 (the same fields).
const ConfigGroup = "pod-security.admission.config.k8s.io"

// Config is kube-apiserver's PodSecurityConfiguration: the policy of
// namespaces that do not label a mode, and who and what is exempt.
type Config struct {
	APIVersion string     `json:"apiVersion,omitempty"`
	Kind       string     `json:"kind,omitempty"`
	Defaults   Defaults   `json:"defaults"`
	Exemptions Exemptions `json:"exemptions"`
}

// Defaults are the levels and versions of each mode ("" is privileged
// and latest).
type Defaults struct {
	Enforce        string `json:"enforce,omitempty"`
	EnforceVersion string `json:"enforce-version,omitempty"`
	Audit          string `json:"audit,omitempty"`
	AuditVersion   string `json:"audit-version,omitempty"`
	Warn           string `json:"warn,omitempty"`
	WarnVersion    string `json:"warn-version,omitempty"`
}

// Exemptions are never checked: requests of these users (authenticated
// names; a request impersonating one is exempt), pods of these runtime
// classes, and everything in these namespaces.
type Exemptions struct {
	Usernames      []string `json:"usernames,omitempty"`
	Namespaces     []string `json:"namespaces,omitempty"`
	RuntimeClasses []string `json:"runtimeClasses,omitempty"`
}

// ParseConfig reads a PodSecurityConfiguration document (YAML or JSON, as
// the configuration of the PodSecurity plugin in an AdmissionConfiguration
// file); empty data is the default configuration.
func ParseConfig(data []byte) (*Config, error) {
	c := &Config{}
	if len(strings.TrimSpace(string(data))) == 0 {
		c.setDefaults()
		return c, nil
	}
	if err := yaml.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("PodSecurityConfiguration: %w", err)
	}
	group, version, _ := strings.Cut(c.APIVersion, "/")
	if c.Kind != "PodSecurityConfiguration" || group != ConfigGroup || (version != "v1" && version != "v1beta1" && version != "v1alpha1") {
		return nil, fmt.Errorf("expected PodSecurityConfiguration of %s/v1, v1beta1 or v1alpha1, got kind %q of %q", ConfigGroup, c.Kind, c.APIVersion)
	}
	c.setDefaults()
	if errs := c.validate(); len(errs) > 0 {
		return nil, fmt.Errorf("PodSecurity invalid: %w", errs.ToAggregate())
	}
	return c, nil
}

func (c *Config) setDefaults() {
	for _, f := range []*string{&c.Defaults.Enforce, &c.Defaults.Audit, &c.Defaults.Warn} {
		if *f == "" {
			*f = string(Privileged)
		}
	}
	for _, f := range []*string{&c.Defaults.EnforceVersion, &c.Defaults.AuditVersion, &c.Defaults.WarnVersion} {
		if *f == "" {
			*f = "latest"
		}
	}
}

// validate checks the configuration as kube-apiserver does at start.
func (c *Config) validate() field.ErrorList {
	var errs field.ErrorList
	d := field.NewPath("defaults")
	for _, lv := range []struct{ name, level, version string }{
		{"enforce", c.Defaults.Enforce, c.Defaults.EnforceVersion},
		{"warn", c.Defaults.Warn, c.Defaults.WarnVersion},
		{"audit", c.Defaults.Audit, c.Defaults.AuditVersion},
	} {
		if _, err := parseLevel(lv.level); err != nil {
			errs = append(errs, field.Invalid(d.Child(lv.name), lv.level, err.Error()))
		}
		if _, err := parseVersion(lv.version); err != nil {
			errs = append(errs, field.Invalid(d.Child(lv.name+"-version"), lv.version, err.Error()))
		}
	}
	e := field.NewPath("exemptions")
	errs = append(errs, validateNames(e.Child("namespaces"), c.Exemptions.Namespaces, func(s string) []string { return machinery.ValidateNamespaceName(s, false) })...)
	errs = append(errs, validateNames(e.Child("runtimeClasses"), c.Exemptions.RuntimeClasses, func(s string) []string { return machinery.NameIsDNSSubdomain(s, false) })...)
	errs = append(errs, validateNames(e.Child("usernames"), c.Exemptions.Usernames, func(s string) []string {
		if s == "" {
			return []string{"username must not be empty"}
		}
		return nil
	})...)
	return errs
}

// validateNames refuses malformed and repeated names.
func validateNames(p *field.Path, names []string, check func(string) []string) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, n := range names {
		if msgs := check(n); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Index(i), n, strings.Join(msgs, ", ")))
			continue
		}
		if seen[n] {
			errs = append(errs, field.Duplicate(p.Index(i), n))
			continue
		}
		seen[n] = true
	}
	return errs
}

// policy is the default policy of the configuration (validated).
func (c *Config) policy() Policy {
	lv := func(level, version string) LevelVersion {
		l, _ := parseLevel(level)
		v, _ := parseVersion(version)
		return LevelVersion{l, v}
	}
	return Policy{
		Enforce: lv(c.Defaults.Enforce, c.Defaults.EnforceVersion),
		Audit:   lv(c.Defaults.Audit, c.Defaults.AuditVersion),
		Warn:    lv(c.Defaults.Warn, c.Defaults.WarnVersion),
	}
}
