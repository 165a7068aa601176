package webhook_test

import (
	"testing"

	"go.uber.org/goleak"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/setpoint-dev/setpoint/webhook"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestPatch: applied to raw, the patch gives raw with the change from
// before to after, whatever raw holds that before lacks.
func TestPatch(t *testing.T) {
	for _, tc := range []struct{ name, raw, before, after, want, patch string }{
		{name: "no change",
			raw: `{"a":1,"x":2}`, before: `{"a":1}`, after: `{"a":1}`, want: `{"a":1,"x":2}`, patch: ``},
		{name: "an item of a list of the same length, unknown item fields kept",
			raw:    `{"l":[{"n":"a","u":1},{"n":"b","u":2}]}`,
			before: `{"l":[{"n":"a"},{"n":"b"}]}`, after: `{"l":[{"n":"a"},{"n":"B"}]}`,
			want: `{"l":[{"n":"a","u":1},{"n":"B","u":2}]}`, patch: `[{"op":"replace","path":"/l/1/n","value":"B"}]`},
		{name: "a list that grew is replaced",
			raw: `{"l":[1]}`, before: `{"l":[1]}`, after: `{"l":[1,2]}`, want: `{"l":[1,2]}`,
			patch: `[{"op":"replace","path":"/l","value":[1,2]}]`},
		{name: "a member under a parent raw lacks",
			raw: `{"spec":{}}`, before: `{"spec":{},"status":{}}`, after: `{"spec":{},"status":{"x":"y"}}`,
			want: `{"spec":{},"status":{"x":"y"}}`, patch: `[{"op":"add","path":"/status","value":{"x":"y"}}]`},
		{name: "names escaped as JSON pointers",
			raw: `{"m":{"a/b":"1","c~d":"2"}}`, before: `{"m":{"a/b":"1","c~d":"2"}}`, after: `{"m":{"a/b":"3"}}`,
			want: `{"m":{"a/b":"3"}}`, patch: `[{"op":"replace","path":"/m/a~1b","value":"3"},{"op":"remove","path":"/m/c~0d"}]`},
		{name: "a set to null, big integers exact",
			raw: `{"a":"x","n":9007199254740993}`, before: `{"a":"x","n":9007199254740993}`, after: `{"a":null,"n":9007199254740993}`,
			want: `{"a":null,"n":9007199254740993}`, patch: `[{"op":"replace","path":"/a","value":null}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := webhook.Patch([]byte(tc.raw), []byte(tc.before), []byte(tc.after))
			if err != nil {
				t.Fatal(err)
			}
			if string(p) != tc.patch {
				t.Fatalf("patch %s, want %s", p, tc.patch)
			}
			if p == nil {
				return
			}
			dp, err := jsonpatch.DecodePatch(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := dp.Apply([]byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			if !jsonpatch.Equal(got, []byte(tc.want)) {
				t.Fatalf("patched %s, want %s", got, tc.want)
			}
		})
	}
}
