package reftest

import (
	"strconv"
	"strings"
)

// volatile are the fields that differ between any two servers answering
// the same request: identities, times and revisions the server assigns.
var volatile = []string{
	"metadata.uid", "metadata.creationTimestamp", "metadata.resourceVersion",
	"metadata.managedFields.time", "details.uid",
	"items.metadata.uid", "items.metadata.creationTimestamp", "items.metadata.resourceVersion",
	"items.metadata.managedFields.time",
	// kube-apiserver writes list items without apiVersion and kind.
	"items.apiVersion", "items.kind",
	// Column descriptions are the server's own words.
	"columnDefinitions.description",
}

// normalize drops the volatile fields (and the extra ones) from a decoded
// JSON answer, in place; lists are walked element by element.
func normalize(v any, extra []string) any {
	for _, p := range append(volatile, extra...) {
		drop(v, strings.Split(p, "."))
	}
	return v
}

func drop(v any, path []string) {
	switch x := v.(type) {
	case map[string]any:
		if len(path) == 1 {
			delete(x, path[0])
			return
		}
		if next, ok := x[path[0]]; ok {
			drop(next, path[1:])
		}
	case []any:
		if i, err := strconv.Atoi(path[0]); err == nil {
			// An index: that element only (a table cell).
			if i >= 0 && i < len(x) {
				if len(path) == 1 {
					x[i] = nil
				} else {
					drop(x[i], path[1:])
				}
			}
			return
		}
		for _, e := range x {
			drop(e, path)
		}
	}
}
