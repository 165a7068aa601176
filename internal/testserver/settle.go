package testserver

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/testwait"
)

// inflightMutating is the series of apiserver_current_inflight_requests
// that counts the writes being served.
const inflightMutating = `apiserver_current_inflight_requests{request_kind="mutating"}`

// WaitWritesServed waits until the server serves no write (as its
// apiserver_current_inflight_requests counts them: from admission by
// priority and fairness to the response). A client that
// gives up on a request (its context canceled, as when a controller stops)
// does not stop the server from finishing it: a test that stops a
// controller and starts another in its place calls this in between, so that
// the new one's lists see every write the old one sent (a real restart
// gives no such guarantee; the test wants the state the old one left).
func (s *Server) WaitWritesServed(t testing.TB) {
	t.Helper()
	testwait.UntilEvery(t, 10*time.Second, 5*time.Millisecond, "writes served", func() error {
		code, body, _ := s.Do(t, http.MethodGet, "/metrics", "", nil)
		if code != http.StatusOK {
			return fmt.Errorf("GET /metrics: %d %s", code, body)
		}
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), inflightMutating+" "); ok {
				if v != "0" {
					return fmt.Errorf("%s writes being served", v)
				}
				return nil
			}
		}
		// The series appears with the first write; none yet means none now.
		return sc.Err()
	})
}
