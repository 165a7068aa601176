package validatingadmissionpolicy_test

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkCreate measures a ConfigMap create evaluated by a policy of
// three validations and a variable ("matched") against one the policy does
// not select ("unmatched"), on the same server.
func BenchmarkCreate(b *testing.B) {
	s := setupB(b)
	policy(b, s, vap("bench", "bench", `"variables":[{"name":"n","expression":"object.metadata.name"}],"validations":[
		{"expression":"variables.n.size() < 64"},{"expression":"!('bad' in object.data)"},{"expression":"object.data.all(k, k.size() < 20)"}]`),
		binding("bench-b", "bench", `"validationActions":["Deny"]`))
	seq := 0
	for _, label := range []string{"bench", "unmatched"} {
		name := map[string]string{"bench": "matched", "unmatched": "unmatched"}[label]
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				seq++
				c, body, _ := s.Do(b, "POST", cmPath, "application/json", strings.NewReader(configMap(fmt.Sprintf("%s-%d", name, seq), `"t":"`+label+`"`, `"a":"1","b":"2"`)))
				if c != 201 {
					b.Fatalf("%d %s", c, body)
				}
			}
		})
	}
}
