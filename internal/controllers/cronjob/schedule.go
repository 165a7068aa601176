package cronjob

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
)

// maxMissed is how many missed start times Kubernetes tolerates before it
// warns (event TooManyMissedTimes); the most recent one still starts.
const maxMissed = 100

// nextScheduleDelta pads every requeue at a schedule time, as Kubernetes
// does, so that a wake-up just before the boundary (clock skew) is rare.
const nextScheduleDelta = 100 * time.Millisecond

// scheduleSpec returns the schedule string the parser reads: spec.schedule
// prefixed with TZ=<timeZone> when a loadable timeZone is set. usesTZ
// reports a TZ or CRON_TZ inside spec.schedule itself, which Kubernetes
// accepts only on old objects and warns about.
func scheduleSpec(cj *batchv1.CronJob) (spec string, usesTZ bool) {
	if strings.Contains(cj.Spec.Schedule, "TZ") {
		return cj.Spec.Schedule, true
	}
	if tz := cj.Spec.TimeZone; tz != nil {
		if _, err := time.LoadLocation(*tz); err == nil {
			return fmt.Sprintf("TZ=%s %s", *tz, cj.Spec.Schedule), false
		}
	}
	return cj.Spec.Schedule, false
}

// parseSchedule parses spec with the standard cron parser (five fields or
// a @descriptor), turning the parser's panics on malformed input into
// errors.
func parseSchedule(spec string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return cron.ParseStandard(spec)
}

// missed classifies the schedule times missed since the earliest time.
type missed int

const (
	noneMissed missed = iota
	fewMissed
	manyMissed
)

// mostRecentScheduleTime returns the earliest time the controller may
// schedule after (lastScheduleTime, else creationTimestamp; with
// withDeadline, no earlier than now - startingDeadlineSeconds), the most
// recent schedule time after it and not after now (nil if none), and how
// many were missed. The count is estimated from the interval between the
// first two times after earliest, as Kubernetes does, so that a controller
// that was down for years does not walk every minute; a schedule whose
// first two times are less than a second apart (an impossible date, such
// as February 31st) is an error.
func mostRecentScheduleTime(cj *batchv1.CronJob, now time.Time, sched cron.Schedule, withDeadline bool) (time.Time, *time.Time, missed, error) {
	earliest := cj.CreationTimestamp.Time
	if cj.Status.LastScheduleTime != nil {
		earliest = cj.Status.LastScheduleTime.Time
	}
	if withDeadline && cj.Spec.StartingDeadlineSeconds != nil {
		if d := now.Add(-time.Duration(*cj.Spec.StartingDeadlineSeconds) * time.Second); d.After(earliest) {
			earliest = d
		}
	}
	t1 := sched.Next(earliest)
	t2 := sched.Next(t1)
	if now.Before(t1) {
		return earliest, nil, noneMissed, nil
	}
	if now.Before(t2) {
		return earliest, &t1, noneMissed, nil
	}
	interval := int64(t2.Sub(t1).Round(time.Second).Seconds())
	if interval < 1 {
		return earliest, nil, noneMissed, fmt.Errorf("time difference between two schedules is less than 1 second")
	}
	count := int64(now.Sub(t1).Seconds())/interval + 1
	// Start one interval before the estimate and let the parser find the
	// real times: irregular schedules (30 6-16/4 * * 1-5) drift from it.
	from := t1.Add(time.Duration((count-2)*interval) * time.Second)
	var recent time.Time
	for t := sched.Next(from); !t.After(now); t = sched.Next(t) {
		recent = t
	}
	kind := fewMissed
	if count > maxMissed {
		kind = manyMissed
	}
	if recent.IsZero() {
		return earliest, nil, kind, nil
	}
	return earliest, &recent, kind, nil
}

// nextScheduleTimeDuration is how long from now until the sync at the next
// schedule time (padded by nextScheduleDelta).
func nextScheduleTimeDuration(cj *batchv1.CronJob, now time.Time, sched cron.Schedule) time.Duration {
	earliest, recent, kind, err := mostRecentScheduleTime(cj, now, sched, false)
	switch {
	case err != nil:
		recent = &now
	case recent == nil && kind == noneMissed:
		recent = &earliest
	case recent == nil:
		recent = &now
	}
	return sched.Next(*recent).Add(nextScheduleDelta).Sub(now)
}
