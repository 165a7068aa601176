package sharding

import (
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
)

// Defaults of Options, as leader election's.
const (
	DefaultShards        = 32
	DefaultNamespace     = "kube-system"
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// Labels on every Lease of a group; a replica lists its group's Leases by
// GroupLabel.
const (
	GroupLabel = "sharding.setpoint.dev/group"
	RoleLabel  = "sharding.setpoint.dev/role"
	roleShard  = "shard"
	roleMember = "member"
)

// Options configure a Sharder. Zero values select the defaults.
type Options struct {
	// Client reaches the API server (required).
	Client *rest.Client
	// Name names the group of replicas (required): its Leases are
	// Namespace/<Name>-shard-<i> and Namespace/<Name>-member-<hash>.
	Name string
	// Namespace holds the Leases (default kube-system).
	Namespace string
	// Identity names this replica in the Leases; default host name plus a
	// random suffix. Every replica of a group needs a distinct identity.
	Identity string
	// Shards is the number S of virtual shards (default 32). Every replica
	// of a group must use the same S.
	Shards int
	// LeaseDuration, RenewDeadline and RetryPeriod default to 15 s, 10 s
	// and 2 s; RenewDeadline must be shorter than LeaseDuration.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Key maps a request to the string hashed into a shard; default
	// NamespaceKey. Every replica of a group must use the same function.
	Key func(reconcile.Request) string
	// Clock times renewals and expiry (default the real clock).
	Clock clock.WithTicker
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// NamespaceKey shards namespaced objects by namespace (every object of a
// namespace lands in one shard) and cluster-scoped ones by name.
func NamespaceKey(req reconcile.Request) string {
	if req.Namespace != "" {
		return req.Namespace
	}
	return req.Name
}

// ShardOf returns the shard of key among n: FNV-1a 32 of key modulo n. It
// is stable across processes and versions.
func ShardOf(key string, n int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum32() % uint32(n))
}

// weight is the rendezvous weight of (identity, shard): a replica prefers
// the shards it weighs most, so that the choice is stable across rounds and
// replicas prefer different shards.
func weight(identity string, shard int) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(identity))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(strconv.Itoa(shard)))
	return h.Sum64()
}

func (o *Options) setDefaults() error {
	if o.Client == nil {
		return errors.New("sharding: Options.Client is required")
	}
	if o.Name == "" {
		return errors.New("sharding: Options.Name is required")
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Identity == "" {
		host, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("sharding: identity: %w", err)
		}
		o.Identity = host + "_" + rand.String(8)
	}
	if o.Shards <= 0 {
		o.Shards = DefaultShards
	}
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = DefaultLeaseDuration
	}
	if o.RenewDeadline <= 0 {
		o.RenewDeadline = DefaultRenewDeadline
	}
	if o.RetryPeriod <= 0 {
		o.RetryPeriod = DefaultRetryPeriod
	}
	if o.RenewDeadline >= o.LeaseDuration {
		return fmt.Errorf("sharding: RenewDeadline %s must be shorter than LeaseDuration %s", o.RenewDeadline, o.LeaseDuration)
	}
	if o.RetryPeriod >= o.RenewDeadline {
		return fmt.Errorf("sharding: RetryPeriod %s must be shorter than RenewDeadline %s", o.RetryPeriod, o.RenewDeadline)
	}
	if o.Key == nil {
		o.Key = NamespaceKey
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return nil
}

// shardLeaseName and memberLeaseName name the group's Leases.
func (o *Options) shardLeaseName(i int) string { return fmt.Sprintf("%s-shard-%d", o.Name, i) }

func (o *Options) memberLeaseName() string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(o.Identity))
	return fmt.Sprintf("%s-member-%016x", o.Name, h.Sum64())
}

// leaseSeconds is LeaseDuration rounded UP to whole seconds: a holder may
// only promise others a lease at least as long as the one it renews against.
func (o *Options) leaseSeconds() int32 {
	return int32((o.LeaseDuration + time.Second - 1) / time.Second)
}
