package podsecurity

import (
	"fmt"
	"regexp"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Level is a Pod Security Standard.
type Level string

const (
	Privileged Level = "privileged"
	Baseline   Level = "baseline"
	Restricted Level = "restricted"
)

// The namespace labels that choose a namespace's policy, and the prefix of
// the audit annotations the plugin records.
const (
	LabelPrefix         = "pod-security.kubernetes.io/"
	EnforceLevelLabel   = LabelPrefix + "enforce"
	EnforceVersionLabel = LabelPrefix + "enforce-version"
	AuditLevelLabel     = LabelPrefix + "audit"
	AuditVersionLabel   = LabelPrefix + "audit-version"
	WarnLevelLabel      = LabelPrefix + "warn"
	WarnVersionLabel    = LabelPrefix + "warn-version"
)

// The audit annotations (each key carries LabelPrefix).
const (
	AnnotationEnforcePolicy   = LabelPrefix + "enforce-policy"
	AnnotationAuditViolations = LabelPrefix + "audit-violations"
	AnnotationExempt          = LabelPrefix + "exempt"
	AnnotationError           = LabelPrefix + "error"
)

// parseLevel returns the level named by s; an unknown name is an error,
// with restricted as the level to evaluate.
func parseLevel(s string) (Level, error) {
	switch l := Level(s); l {
	case Privileged, Baseline, Restricted:
		return l, nil
	}
	return Restricted, fmt.Errorf("must be one of privileged, baseline, restricted")
}

// strictness orders the levels.
func strictness(l Level) int {
	switch l {
	case Privileged:
		return 0
	case Baseline:
		return 1
	case Restricted:
		return 2
	}
	return -1
}

// Version is a policy version: "latest" or v1.<minor>.
type Version struct {
	minor  int
	latest bool
}

// Latest is the newest version of the policies.
var Latest = Version{latest: true}

// V1 returns version v1.minor.
func V1(minor int) Version { return Version{minor: minor} }

func (v Version) String() string {
	if v.latest {
		return "latest"
	}
	return fmt.Sprintf("v1.%d", v.minor)
}

// before reports whether v is older than w (latest is newer than all).
func (v Version) before(w Version) bool {
	switch {
	case v.latest:
		return false
	case w.latest:
		return true
	}
	return v.minor < w.minor
}

var versionPattern = regexp.MustCompile(`^v1\.(0|[1-9][0-9]*)$`)

// parseVersion returns the version named by s; a malformed one is an
// error, with latest as the version to evaluate.
func parseVersion(s string) (Version, error) {
	if s == "latest" {
		return Latest, nil
	}
	m := versionPattern.FindStringSubmatch(s)
	if m == nil {
		return Latest, fmt.Errorf(`must be "latest" or "v1.x"`)
	}
	minor, err := strconv.Atoi(m[1])
	if err != nil {
		return Latest, fmt.Errorf(`must be "latest" or "v1.x"`)
	}
	return V1(minor), nil
}

// LevelVersion is a level at a version, printed "restricted:latest".
type LevelVersion struct {
	Level   Level
	Version Version
}

func (lv LevelVersion) String() string { return string(lv.Level) + ":" + lv.Version.String() }

// equivalent: both privileged, or the same level and version.
func (lv LevelVersion) equivalent(o LevelVersion) bool {
	return (lv.Level == Privileged && o.Level == Privileged) || lv == o
}

// Policy is what a namespace asks for in each mode.
type Policy struct {
	Enforce, Audit, Warn LevelVersion
}

func (p Policy) fullyPrivileged() bool {
	return p.Enforce.Level == Privileged && p.Audit.Level == Privileged && p.Warn.Level == Privileged
}

func (p Policy) equivalent(o Policy) bool {
	return p.Enforce.equivalent(o.Enforce) && p.Audit.equivalent(o.Audit) && p.Warn.equivalent(o.Warn)
}

var labelsPath = field.NewPath("metadata", "labels")

// policyFor resolves a namespace's labels to its policy, each mode not
// labelled taking the default. A policy is returned even with errors: a
// malformed enforce level enforces restricted, a malformed version is
// latest, a malformed audit or warn level is privileged (they fail open).
// When the enforce level is labelled and is stricter than the warn level,
// which is not labelled, warn takes the enforce level (and its version,
// unless warn's version is labelled).
func policyFor(labels map[string]string, defaults Policy) (Policy, field.ErrorList) {
	p := defaults
	if len(labels) == 0 {
		return p, nil
	}
	var errs field.ErrorList
	bad := func(label, value string, err error) {
		if err != nil {
			errs = append(errs, field.Invalid(labelsPath.Key(label), value, err.Error()))
		}
	}
	var err error
	enforceLabelled := false
	if v, ok := labels[EnforceLevelLabel]; ok {
		p.Enforce.Level, err = parseLevel(v)
		enforceLabelled = err == nil
		bad(EnforceLevelLabel, v, err)
	}
	if v, ok := labels[EnforceVersionLabel]; ok {
		p.Enforce.Version, err = parseVersion(v)
		bad(EnforceVersionLabel, v, err)
	}
	if v, ok := labels[AuditLevelLabel]; ok {
		if p.Audit.Level, err = parseLevel(v); err != nil {
			p.Audit.Level = Privileged
		}
		bad(AuditLevelLabel, v, err)
	}
	if v, ok := labels[AuditVersionLabel]; ok {
		p.Audit.Version, err = parseVersion(v)
		bad(AuditVersionLabel, v, err)
	}
	_, warnLabelled := labels[WarnLevelLabel]
	if warnLabelled {
		v := labels[WarnLevelLabel]
		if p.Warn.Level, err = parseLevel(v); err != nil {
			p.Warn.Level = Privileged
		}
		bad(WarnLevelLabel, v, err)
	}
	_, warnVersionLabelled := labels[WarnVersionLabel]
	if warnVersionLabelled {
		v := labels[WarnVersionLabel]
		p.Warn.Version, err = parseVersion(v)
		bad(WarnVersionLabel, v, err)
	}
	if !warnLabelled && enforceLabelled && strictness(p.Enforce.Level) > strictness(p.Warn.Level) {
		p.Warn.Level = p.Enforce.Level
		if !warnVersionLabelled {
			p.Warn.Version = p.Enforce.Version
		}
	}
	return p, errs
}
