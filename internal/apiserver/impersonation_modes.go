package apiserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/serviceaccount"
)

// impersonator decides impersonation as kube-apiserver v1.37 does
// (constrained impersonation, KEP-5284, with the legacy mode kept). It
// tries the modes that apply to the wanted user in order, the mode that
// last succeeded for the same requestor first; the first mode that allows
// wins, else the first refusal is the answer:
//
//   - associated-node: a service account acting as the node its token is
//     bound to (system:node:<its node>, nothing else asked);
//   - arbitrary-node: system:node:<name>, nothing else asked;
//   - serviceaccount: system:serviceaccount:<ns>:<name>, nothing else asked;
//   - user-info: any other user, with uid, groups and extra;
//   - legacy: the verb impersonate on users, groups and serviceaccounts
//     (core group) and uids and userextras (authentication.k8s.io).
//
// A constrained mode first needs impersonate-on:<mode>:<verb> on what the
// request does, then impersonate:<mode> on each part of the wanted user,
// in authentication.k8s.io (nodes, serviceaccounts, users, uids, groups,
// userextras/<key>).
type impersonator struct {
	authz func() authorizer.Authorizer

	mu sync.Mutex
	// lastMode is the index of the mode that last succeeded per requestor.
	lastMode map[string]int
}

const maxImpersonationRequestors = 10_000

// Constants of Kubernetes' users and groups.
const (
	userAnonymous      = "system:anonymous"
	groupAuthenticated = "system:authenticated"
	groupUnauthentic   = "system:unauthenticated"
	groupMasters       = "system:masters"
	groupNodes         = "system:nodes"
	nodeUserPrefix     = "system:node:"
	associatedNodeKeys = "authentication.kubernetes.io/associated-node-keys"
)

type impersonationMode struct {
	name string // "" for legacy
	// applies reports whether the mode may impersonate wanted for
	// requestor.
	applies func(wanted, requestor registry.UserInfo) bool
}

var impersonationModes = []impersonationMode{
	{"associated-node", func(w, r registry.UserInfo) bool {
		node, ok := nodeName(w.Name)
		_, _, isSA := serviceaccount.SplitUserName(r.Name)
		return onlyName(w) && ok && isSA && len(r.Extra[extraNodeName]) == 1 && r.Extra[extraNodeName][0] == node
	}},
	{"arbitrary-node", func(w, _ registry.UserInfo) bool {
		_, ok := nodeName(w.Name)
		return onlyName(w) && ok
	}},
	{"serviceaccount", func(w, _ registry.UserInfo) bool {
		_, _, ok := serviceaccount.SplitUserName(w.Name)
		return onlyName(w) && ok
	}},
	{"user-info", func(w, _ registry.UserInfo) bool {
		_, isNode := nodeName(w.Name)
		_, _, isSA := serviceaccount.SplitUserName(w.Name)
		return !isNode && !isSA
	}},
	{"", func(registry.UserInfo, registry.UserInfo) bool { return true }},
}

func onlyName(u registry.UserInfo) bool {
	return u.UID == "" && len(u.Groups) == 0 && len(u.Extra) == 0
}

// nodeName returns the node of a node user name (a valid node name).
func nodeName(user string) (string, bool) {
	name, ok := strings.CutPrefix(user, nodeUserPrefix)
	return name, ok && len(validation.NameIsDNSSubdomain(name, false)) == 0
}

// impersonate returns the user the request may act as, or the refusal.
func (m *impersonator) impersonate(ctx context.Context, wanted registry.UserInfo, request authorizer.Attributes) (registry.UserInfo, error) {
	requestor := registry.UserInfo{Name: request.User.Name, UID: request.User.UID, Groups: request.User.Groups, Extra: request.User.Extra}
	m.mu.Lock()
	last, hasLast := m.lastMode[requestor.Name]
	m.mu.Unlock()
	order := make([]int, 0, len(impersonationModes))
	if hasLast {
		order = append(order, last)
	}
	for i := range impersonationModes {
		if !hasLast || i != last {
			order = append(order, i)
		}
	}
	var firstErr error
	for _, i := range order {
		mode := impersonationModes[i]
		if !mode.applies(wanted, requestor) {
			continue
		}
		u, err := m.check(ctx, mode.name, wanted, request)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		m.remember(requestor.Name, i)
		return u, nil
	}
	if firstErr == nil {
		firstErr = errors.New("all impersonation modes failed")
	}
	return registry.UserInfo{}, firstErr
}

func (m *impersonator) remember(requestor string, mode int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lastMode == nil || len(m.lastMode) >= maxImpersonationRequestors {
		m.lastMode = map[string]int{}
	}
	m.lastMode[requestor] = mode
}

// check runs one mode's checks, in kube-apiserver's order: the
// impersonate-on check of a constrained mode, then the user name, uid,
// groups and extra.
func (m *impersonator) check(ctx context.Context, mode string, wanted registry.UserInfo, request authorizer.Attributes) (registry.UserInfo, error) {
	c := modeChecker{m: m, mode: mode, verb: "impersonate", group: "", requestor: request.User}
	if mode != "" {
		c.verb, c.group = "impersonate:"+mode, "authentication.k8s.io"
		if mode == "associated-node" {
			c.requestor = associatedNodeRequestor(request.User)
		}
		on := request
		on.User, on.Verb = c.requestor, "impersonate-on:"+mode+":"+request.Verb
		if err := c.authorize(ctx, on); err != nil {
			return registry.UserInfo{}, err
		}
	}
	actual := wanted
	actual.Groups = slices.Clone(wanted.Groups)
	if err := c.userName(ctx, wanted, &actual); err != nil {
		return registry.UserInfo{}, err
	}
	if wanted.UID != "" {
		if err := c.authorize(ctx, c.attrs("authentication.k8s.io", "uids", wanted.UID)); err != nil {
			return registry.UserInfo{}, err
		}
	}
	if err := c.groups(ctx, wanted.Groups); err != nil {
		return registry.UserInfo{}, err
	}
	if err := c.extra(ctx, wanted.Extra); err != nil {
		return registry.UserInfo{}, err
	}
	switch {
	case actual.Name == userAnonymous:
		actual.Groups = ensureGroup(actual.Groups, groupUnauthentic)
	case !slices.Contains(actual.Groups, groupUnauthentic):
		actual.Groups = ensureGroup(actual.Groups, groupAuthenticated)
	}
	return actual, nil
}

// associatedNodeRequestor is the requestor as the associated-node mode
// presents it to the authorizer: its extra replaced by the list of its
// extra keys.
func associatedNodeRequestor(u authorizer.User) authorizer.User {
	keys := make([]string, 0, len(u.Extra))
	for k := range u.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	u.Extra = map[string][]string{associatedNodeKeys: keys}
	return u
}

func ensureGroup(groups []string, g string) []string {
	if slices.Contains(groups, g) {
		return groups
	}
	return append(groups, g)
}

// modeChecker authorizes the parts of the wanted user in one mode.
type modeChecker struct {
	m         *impersonator
	mode      string
	verb      string
	group     string // of users, groups, nodes and serviceaccounts
	requestor authorizer.User
}

func (c modeChecker) attrs(group, resource, name string) authorizer.Attributes {
	version := "v1"
	return authorizer.Attributes{User: c.requestor, Verb: c.verb, ResourceRequest: true,
		APIGroup: group, APIVersion: version, Resource: resource, Name: name}
}

// authorize is kube-apiserver's checkAuthorization: allowed, else the 403
// for a, with the authorizer's reason (and error).
func (c modeChecker) authorize(ctx context.Context, a authorizer.Attributes) error {
	d, reason, err := c.m.authz().Authorize(ctx, a)
	if d == authorizer.DecisionAllow {
		return nil
	}
	if apierrors.IsForbidden(err) {
		return err
	}
	switch {
	case err != nil && reason != "":
		reason = fmt.Sprintf("%v: %s", err, reason)
	case err != nil:
		reason = err.Error()
	}
	return forbidden(a, reason)
}

func (c modeChecker) userName(ctx context.Context, wanted registry.UserInfo, actual *registry.UserInfo) error {
	a := c.attrs(c.group, "users", wanted.Name)
	if c.mode != "" {
		if node, ok := nodeName(wanted.Name); ok {
			a.Resource, a.Name = "nodes", node
			if c.mode == "associated-node" {
				a.Name = "*"
			}
			if len(wanted.Groups) != 0 {
				return forbidden(a, fmt.Sprintf("when impersonating a node, cannot impersonate groups %q", wanted.Groups))
			}
			actual.Groups = []string{groupNodes}
		}
	}
	if ns, name, ok := serviceaccount.SplitUserName(wanted.Name); ok {
		a.Resource, a.Namespace, a.Name = "serviceaccounts", ns, name
		if c.mode != "" && len(wanted.Groups) != 0 {
			return forbidden(a, fmt.Sprintf("when impersonating a service account, cannot impersonate groups %q", wanted.Groups))
		}
		if len(wanted.Groups) == 0 {
			actual.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}
		}
	}
	return c.authorize(ctx, a)
}

// manyChecks is how many groups or extra values make a constrained mode
// try one wildcard check first.
const manyChecks = 4

func (c modeChecker) groups(ctx context.Context, groups []string) error {
	if len(groups) == 0 {
		return nil
	}
	a := c.attrs(c.group, "groups", "")
	if c.mode != "" {
		if slices.Contains(groups, "") {
			return forbidden(a, "impersonating the empty string group is not allowed")
		}
		if slices.Contains(groups, groupMasters) {
			a.Name = groupMasters
			return forbidden(a, "impersonating the system:masters group is not allowed")
		}
		if len(groups) >= manyChecks {
			a.Name = "*"
			if c.authorize(ctx, a) == nil {
				return nil
			}
		}
	}
	for _, g := range groups {
		a.Name = g
		if err := c.authorize(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

func (c modeChecker) extra(ctx context.Context, extra map[string][]string) error {
	if len(extra) == 0 {
		return nil
	}
	a := c.attrs("authentication.k8s.io", "userextras", "")
	if c.mode != "" {
		if err := validateImpersonatedExtra(extra); err != nil {
			return forbidden(a, err.Error())
		}
		if isLargeExtra(extra) {
			a.Subresource, a.Name = "*", "*"
			if c.authorize(ctx, a) == nil {
				return nil
			}
		}
	}
	for key, values := range extra {
		a.Subresource = key
		for _, v := range values {
			a.Name = v
			if err := c.authorize(ctx, a); err != nil {
				return err
			}
		}
	}
	return nil
}

func validateImpersonatedExtra(extra map[string][]string) error {
	p := field.NewPath("extra", "key")
	for key, values := range extra {
		switch {
		case key == "":
			return errors.New("impersonating the empty string key in extra is not allowed")
		case len(utilvalidation.IsDomainPrefixedPath(p, key)) != 0:
			return fmt.Errorf("impersonating an invalid key in extra is not allowed: %w", utilvalidation.IsDomainPrefixedPath(p, key).ToAggregate())
		case key != strings.ToLower(key):
			return fmt.Errorf("impersonating a non-lowercase key in extra is not allowed: %q", key)
		case len(values) == 0:
			return errors.New("impersonating empty values in extra is not allowed")
		case slices.Contains(values, ""):
			return errors.New("impersonating the empty string value in extra is not allowed")
		}
	}
	return nil
}

func isLargeExtra(extra map[string][]string) bool {
	n := 0
	for _, values := range extra {
		n += len(values)
	}
	return len(extra) >= manyChecks || n >= manyChecks
}
