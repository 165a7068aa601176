package main

import (
	"os"

	"github.com/setpoint-dev/setpoint/compat/procstat"
)

// sampleCPU samples the CPU seconds of this process and of procs now and
// returns a function giving what each used since.
func sampleCPU(procs []procstat.Named) (func() (client, server float64, err error), error) {
	self, err := procstat.Read(os.Getpid())
	if err != nil {
		return nil, err
	}
	srv, err := procstat.SampleAll(procs)
	if err != nil {
		return nil, err
	}
	return func() (float64, float64, error) {
		self2, err := procstat.Read(os.Getpid())
		if err != nil {
			return 0, 0, err
		}
		srv2, err := procstat.SampleAll(procs)
		if err != nil {
			return 0, 0, err
		}
		return self2.CPUSeconds - self.CPUSeconds, srv2.Total().CPUSeconds - srv.Total().CPUSeconds, nil
	}, nil
}
