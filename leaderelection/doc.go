// Package leaderelection lets several replicas of a controller agree that
// exactly one of them — the leader — does the work, using a
// coordination.k8s.io/v1 Lease as the lock. It follows the protocol of
// client-go's leaderelection package, so setpoint candidates and client-go
// candidates can share a Lease; the code is setpoint's own.
//
// # What the package owns
//
// A LeaderElector (New, then Run once) owns one candidate's view of one
// Lease: the last record it read or wrote, when that record last changed by
// the candidate's own clock, and whether the candidate leads. Run owns the
// goroutines it starts (the OnStartedLeading goroutine, the attempt in
// flight, the OnNewLeader notifier) and returns only after all of them ended.
//
// # Protocol
//
// A candidate tries at once and then every RetryPeriod (plus up to
// JitterFactor*RetryPeriod of random jitter) to take the lease. It may
// write itself in as holder only when the lease does not exist (create), is
// free (holderIdentity ""), is already its own, or has expired: its record
// has not changed for leaseDurationSeconds measured on THIS candidate's
// clock from the moment it first saw that record. Remote timestamps
// (renewTime) are never compared with the local clock, so clock skew
// between machines does not matter; only clock rate does. Every write
// carries the resourceVersion it read as a precondition: of two candidates
// racing for an expired lease, one gets a 409 Conflict and stays a follower.
// leaseTransitions is incremented whenever the holder changes.
//
// Once it holds the lease, Run starts OnStartedLeading(leaderCtx) in a
// goroutine and renews every RetryPeriod. If no renewal succeeds within
// RenewDeadline of the moment the last successful one was SENT, or a read
// shows another holder, it stops leading: leaderCtx is cancelled,
// OnStoppedLeading is called, and Run returns once OnStartedLeading has
// returned. A candidate does not run again; build a new one (or exit the
// process, the usual choice) to compete again.
//
// # Invariant: one leader at a time
//
// Let S be the time the leader sent its last successful write. The server
// applied it after S, so any other candidate saw that record at some O >= S
// and will not take over before O + leaseDuration. The leader stops at
// S + RenewDeadline. Validate requires RenewDeadline < LeaseDuration, and the
// written leaseDurationSeconds is LeaseDuration rounded UP to whole seconds,
// so the old leader's leaderCtx is cancelled at least
// LeaseDuration-RenewDeadline before anyone else may start. That gap must
// cover how long OnStartedLeading takes to notice cancellation and how much
// faster than real time the leader's clock could run relative to others.
//
// # Release
//
// With ReleaseOnCancel, cancelling Run's context while leading cancels
// leaderCtx, waits for OnStartedLeading to return, and only then writes the
// lease free (holderIdentity "", leaseDurationSeconds 1, under the
// resourceVersion precondition), so another candidate takes over at its
// next attempt instead of after the lease expires; OnStoppedLeading is
// called after the release. Without it, followers wait for expiry.
//
// # Health
//
// LeaderElector.Check and HealthzAdaptor report unhealthy a candidate that
// believes it leads yet has not renewed for longer than LeaseDuration plus a
// tolerance — a wedged election loop, which should get the process restarted.
//
// Time comes from Config.Clock (k8s.io/utils/clock), so tests drive retries
// and expiry with a fake clock; per-request network timeouts (RenewDeadline
// per acquire attempt, release) use real time.
package leaderelection
