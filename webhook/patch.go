package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Patch returns the JSON Patch (RFC 6902) that applies to raw, the object
// the API server sent, the changes that turned before into after, where
// before and after are a Go type's encodings of raw before and after a
// change. What before and after agree on is left as raw has it: fields of
// raw the type dropped stay, and fields the type added (zero values it
// always encodes) are not added. An object member changed in part is
// patched member by member, a list of unchanged length item by item; a
// list whose length changed is replaced. The result is nil when nothing
// changed.
func Patch(raw, before, after []byte) ([]byte, error) {
	var r, b, a any
	for _, d := range []struct {
		name string
		data []byte
		into *any
	}{{"object", raw, &r}, {"decoded object", before, &b}, {"changed object", after, &a}} {
		dec := json.NewDecoder(bytes.NewReader(d.data))
		dec.UseNumber()
		if err := dec.Decode(d.into); err != nil {
			return nil, fmt.Errorf("patch: read %s: %w", d.name, err)
		}
	}
	target := merge3(r, b, a)
	var ops []map[string]any
	diff("", r, target, &ops)
	if len(ops) == 0 {
		return nil, nil
	}
	out, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("patch: encode: %w", err)
	}
	return out, nil
}

// merge3 applies to raw what changed from before to after.
func merge3(raw, before, after any) any {
	if reflect.DeepEqual(before, after) {
		return raw
	}
	rm, rok := raw.(map[string]any)
	bm, bok := before.(map[string]any)
	am, aok := after.(map[string]any)
	if rok && bok && aok {
		out := make(map[string]any, len(rm))
		for k, v := range rm {
			out[k] = v
		}
		for k := range union(bm, am) {
			bv, inB := bm[k]
			av, inA := am[k]
			rv, inR := rm[k]
			switch {
			case !inA:
				delete(out, k)
			case !inB || !inR:
				out[k] = av
			default:
				out[k] = merge3(rv, bv, av)
			}
		}
		return out
	}
	rl, rok := raw.([]any)
	bl, bok := before.([]any)
	al, aok := after.([]any)
	if rok && bok && aok && len(rl) == len(bl) && len(bl) == len(al) {
		out := make([]any, len(rl))
		for i := range rl {
			out[i] = merge3(rl[i], bl[i], al[i])
		}
		return out
	}
	return after
}

func union(a, b map[string]any) map[string]bool {
	keys := make(map[string]bool, len(a)+len(b))
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

// diff appends to ops the operations that turn from into to at path.
func diff(path string, from, to any, ops *[]map[string]any) {
	if reflect.DeepEqual(from, to) {
		return
	}
	fm, fok := from.(map[string]any)
	tm, tok := to.(map[string]any)
	if fok && tok {
		keys := make([]string, 0, len(fm)+len(tm))
		for k := range union(fm, tm) {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := path + "/" + escape(k)
			fv, inF := fm[k]
			tv, inT := tm[k]
			switch {
			case !inT:
				*ops = append(*ops, map[string]any{"op": "remove", "path": p})
			case !inF:
				*ops = append(*ops, map[string]any{"op": "add", "path": p, "value": tv})
			default:
				diff(p, fv, tv, ops)
			}
		}
		return
	}
	fl, fok := from.([]any)
	tl, tok := to.([]any)
	if fok && tok && len(fl) == len(tl) {
		for i := range fl {
			diff(path+"/"+strconv.Itoa(i), fl[i], tl[i], ops)
		}
		return
	}
	*ops = append(*ops, map[string]any{"op": "replace", "path": path, "value": to})
}

// escape encodes a member name as a JSON Pointer token (RFC 6901).
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
