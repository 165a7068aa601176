package reftest

import (
	"strings"
)

// volatile are the fields that differ between any two servers answering
// the same request: identities, times and revisions the server assigns.
var volatile = []string{
	"metadata.uid", "metadata.creationTimestamp", "metadata.resourceVersion",
	"metadata.managedFields.time", "details.uid",
	"items.metadata.uid", "items.metadata.creationTimestamp", "items.metadata.resourceVersion",
	"items.metadata.managedFields.time",
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
		for _, e := range x {
			drop(e, path)
		}
	}
}
