package clientgo

// The reference packages the benchmarks of this module compare against.
import (
	_ "k8s.io/client-go/tools/cache"
	_ "k8s.io/client-go/util/workqueue"
)
