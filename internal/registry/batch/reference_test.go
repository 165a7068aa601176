package batch_test

import (
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry/recorded"
)

// TestJobsAsReference replays requests on jobs (creates, updates, status
// updates) whose answers kube-apiserver v1.37.2 gave.
func TestJobsAsReference(t *testing.T) { recorded.Run(t, "testdata/jobs.json") }

// TestCronJobsAsReference does the same for cron jobs.
func TestCronJobsAsReference(t *testing.T) { recorded.Run(t, "testdata/cronjobs.json") }
