package rest

import (
	"errors"
	"net/http"
	"strconv"
	"syscall"
	"time"
)

// Retry policy (modelled on client-go's):
//
//   - A 429 or 5xx response carrying a Retry-After header is retried for
//     every verb: the server uses the header to say it did not act on the
//     request. The wait is max(Retry-After, backoff).
//   - A 429 without Retry-After is retried for every verb too: the request
//     was rejected before processing.
//   - Any other 5xx (except 501 and 505, which are never transient) is
//     retried only for idempotent verbs (GET, HEAD, PUT,
//     DELETE), since a POST or PATCH may already have taken effect.
//   - A transport error is retried for every verb when the connection was
//     refused (nothing was sent), and for idempotent verbs when it was any
//     other error (reset, EOF, ...).
//
// Backoff doubles from backoffBase up to backoffCap per attempt. Retries stop
// after Config.MaxRetries attempts or when the context ends.
const (
	backoffBase = 100 * time.Millisecond
	backoffCap  = 10 * time.Second
)

func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// backoff is the wait before retry number attempt (1-based).
func backoff(attempt int) time.Duration {
	d := backoffBase
	for i := 1; i < attempt && d < backoffCap; i++ {
		d *= 2
	}
	return min(d, backoffCap)
}

// retryAfter parses a Retry-After header given in seconds.
func retryAfter(h http.Header) (time.Duration, bool) {
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}

// shouldRetry decides whether an attempt that returned resp or err may be
// retried, and the wait before the next attempt.
func shouldRetry(method string, attempt int, resp *http.Response, err error) (time.Duration, bool) {
	wait := backoff(attempt)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) || idempotent(method) {
			return wait, true
		}
		return 0, false
	}
	code := resp.StatusCode
	if code != http.StatusTooManyRequests && (code < 500 || code == http.StatusNotImplemented ||
		code == http.StatusHTTPVersionNotSupported) {
		return 0, false
	}
	if ra, ok := retryAfter(resp.Header); ok {
		return max(ra, wait), true
	}
	if code == http.StatusTooManyRequests || idempotent(method) {
		return wait, true
	}
	return 0, false
}
