package informer

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/setpoint-dev/setpoint/internal/scheme"
)

// BenchmarkCompactPods decodes 10,000 server-shaped pods from JSON list
// pages of 500, as the reflector does, compacts them, and reports the heap
// they retain per pod (after GC, compactor tables included) and the time
// compaction adds per pod. volumes=per-pod gives every pod its own
// service-account volume name, as real clusters do, which keeps their
// containers and volumes from being shared whole.
func BenchmarkCompactPods(b *testing.B) {
	for _, perPod := range []bool{false, true} {
		pages := podPages(b, 10_000, 500, perPod)
		for _, mode := range []Compaction{CompactNone, CompactStrings, CompactShare} {
			name := fmt.Sprintf("volumes=%s/mode=%s", map[bool]string{false: "same", true: "per-pod"}[perPod],
				[]string{"share", "strings", "none"}[mode])
			b.Run(name, func(b *testing.B) { benchCompact(b, pages, mode) })
		}
	}
}

func benchCompact(b *testing.B, pages [][]byte, mode Compaction) {
	codecs := scheme.New()
	var retained, compactTime float64
	var n int
	for range b.N {
		c := newCompactor(mode)
		before := heapAfterGC()
		var keep []*corev1.Pod
		for _, page := range pages {
			list, _, err := codecs.JSON.Decode(page, nil, &corev1.PodList{})
			if err != nil {
				b.Fatal(err)
			}
			items, err := meta.ExtractList(list)
			if err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			for _, o := range items {
				p := o.(*corev1.Pod)
				if c != nil {
					c.Compact(p)
				}
				keep = append(keep, p)
			}
			compactTime += time.Since(t0).Seconds()
		}
		n = len(keep)
		retained += float64(heapAfterGC() - before)
		runtime.KeepAlive(keep)
		runtime.KeepAlive(c)
	}
	b.ReportMetric(retained/float64(b.N)/float64(n), "B-retained/pod")
	b.ReportMetric(compactTime*1e9/float64(b.N)/float64(n), "ns-compact/pod")
}

func heapAfterGC() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// podPages encodes n pods as PodList JSON pages.
func podPages(b *testing.B, n, pageSize int, perPodVolumes bool) [][]byte {
	var pages [][]byte
	for off := 0; off < n; off += pageSize {
		page := corev1.PodList{}
		page.Kind, page.APIVersion = "PodList", "v1"
		for i := off; i < min(off+pageSize, n); i++ {
			suffix := "x7k2p"
			if perPodVolumes {
				suffix = fmt.Sprintf("%05x", i)
			}
			page.Items = append(page.Items, *serverPod(i, suffix))
		}
		raw, err := json.Marshal(&page)
		if err != nil {
			b.Fatal(err)
		}
		pages = append(pages, raw)
	}
	return pages
}
