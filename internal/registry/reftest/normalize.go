package reftest

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// volatile are the fields that differ between any two servers answering
// the same request: identities, times and revisions the server assigns.
var volatile = []string{
	"metadata.uid", "metadata.creationTimestamp", "metadata.deletionTimestamp",
	"metadata.resourceVersion", "metadata.managedFields.time", "details.uid",
	"items.metadata.uid", "items.metadata.creationTimestamp", "items.metadata.deletionTimestamp",
	"items.metadata.resourceVersion", "items.metadata.managedFields.time",
	// kube-apiserver writes list items without apiVersion and kind.
	"items.apiVersion", "items.kind",
	// Tables: the servers' own words for the columns, and the metadata
	// of the row objects.
	"columnDefinitions.description",
	"rows.object.metadata.uid", "rows.object.metadata.creationTimestamp", "rows.object.metadata.deletionTimestamp",
	"rows.object.metadata.resourceVersion", "rows.object.metadata.managedFields.time",
}

var (
	uuids = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// The time of a managedFields entry, as a message renders an object's
	// metadata.
	entryTimes = regexp.MustCompile(`"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"`)
)

// ownUIDs returns the uids the server gave the answer's object (or list
// items), which other fields may repeat.
func ownUIDs(v any) []string {
	var out []string
	if uid, ok := dig(v, "metadata", "uid").(string); ok && uid != "" {
		out = append(out, uid)
	}
	items, _ := dig(v, "items").([]any)
	for _, it := range items {
		if uid, ok := dig(it, "metadata", "uid").(string); ok && uid != "" {
			out = append(out, uid)
		}
	}
	return out
}

// normalize rewrites a decoded answer in place: uids are written "UID",
// the messages of a Status lose their uids and the times of the
// managedFields entries they quote, and the volatile and ignored paths
// are dropped.
func normalize(v any, uids, ignore []string) any {
	if slices.Contains(ignore, "*") {
		return nil
	}
	v = replaceUIDs(v, uids)
	if m, ok := v.(map[string]any); ok && m["kind"] == "Status" {
		scrub(m, "message")
		causes, _ := dig(m, "details", "causes").([]any)
		for _, c := range causes {
			if cm, ok := c.(map[string]any); ok {
				scrub(cm, "message")
			}
		}
	}
	for _, p := range append(volatile[:len(volatile):len(volatile)], ignore...) {
		drop(v, strings.Split(p, "."))
	}
	dropAges(v)
	return v
}

// dropAges writes null for the cells of a Table's Age columns: an age is
// the time since the object's creationTimestamp, as the server's clock
// reads it when it prints the row.
func dropAges(v any) {
	m, ok := v.(map[string]any)
	if !ok || m["kind"] != "Table" {
		return
	}
	cols, _ := m["columnDefinitions"].([]any)
	rows, _ := m["rows"].([]any)
	for i, c := range cols {
		if name, _ := dig(c, "name").(string); name != "Age" {
			continue
		}
		for _, r := range rows {
			if cells, ok := dig(r, "cells").([]any); ok && i < len(cells) {
				cells[i] = nil
			}
		}
	}
}

func scrub(m map[string]any, key string) {
	if s, ok := m[key].(string); ok {
		m[key] = entryTimes.ReplaceAllString(uuids.ReplaceAllString(s, "UID"), `"time":"<time>"`)
	}
}

func replaceUIDs(v any, uids []string) any {
	if len(uids) == 0 {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = replaceUIDs(e, uids)
		}
	case []any:
		for i, e := range x {
			x[i] = replaceUIDs(e, uids)
		}
	case string:
		for _, u := range uids {
			x = strings.ReplaceAll(x, u, "UID")
		}
		return x
	}
	return v
}

// drop deletes path from v. A numeric segment picks one element of an
// array (its value becomes null); any other segment applies to every
// element.
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
		i, err := strconv.Atoi(path[0])
		if err != nil {
			for _, e := range x {
				drop(e, path)
			}
			return
		}
		if i < 0 || i >= len(x) {
			return
		}
		if len(path) == 1 {
			x[i] = nil
		} else {
			drop(x[i], path[1:])
		}
	}
}

// dig returns the value at the keys of nested maps, nil if absent.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
