package difftest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

// Side is one server under comparison.
type Side struct {
	// Name is "reference" or "setpoint".
	Name string
	// URL is the server's base URL (https://127.0.0.1:port).
	URL string
	// Client carries the admin credentials.
	Client *http.Client
	// User is the name the admin credentials authenticate as ("admin",
	// "setpoint-admin"; see LearnUser); responses carry it, and answers
	// normalize it (Normalization.User).
	User string

	rootCAs *x509.CertPool // the server's CA, for WithToken
}

// LearnUser asks the side who its credentials authenticate as (a
// SelfSubjectReview) and records the name in s.User.
func (s *Side) LearnUser(ctx context.Context) error {
	resp, err := s.Do(ctx, Request{Method: http.MethodPost, Path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
		Body: []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`)})
	if err != nil {
		return err
	}
	name, _ := Get(resp.JSON(), "status.userInfo.username").(string)
	if resp.Code != http.StatusCreated || name == "" {
		return fmt.Errorf("%s: self subject review: %d %s", s.Name, resp.Code, resp.Body)
	}
	s.User = name
	return nil
}

// Request is one HTTP request, sent to both sides alike.
type Request struct {
	Method string
	// Path is the path and query ("/api/v1/namespaces?limit=1").
	Path string
	// Header holds request headers (Accept, Content-Type).
	Header map[string]string
	// Body is the request body, sent as is.
	Body []byte
	// Timeout bounds the whole exchange, body included (default 30 s).
	Timeout time.Duration
	// StopAt, for a stream, ends reading the body after the first line it
	// returns true for (the line is kept).
	StopAt func(line []byte) bool
}

// Response is what a client received.
type Response struct {
	Code   int
	Header http.Header
	Body   []byte
	// User is the Side's User: who sent the request.
	User string
}

// MediaType is the response's media type without parameters.
func (r *Response) MediaType() string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return r.Header.Get("Content-Type")
	}
	return mt
}

// JSON decodes the body (numbers kept as json.Number); nil when the body
// is not a JSON document.
func (r *Response) JSON() any {
	return DecodeJSON(r.Body)
}

// DecodeJSON decodes one JSON document with numbers kept exact; nil when b
// is not a single JSON document.
func DecodeJSON(b []byte) any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	if dec.More() {
		return nil
	}
	return v
}

// Do sends r and reads the whole answer.
func (s *Side) Do(ctx context.Context, r Request) (*Response, error) {
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+r.Path, body)
	if err != nil {
		return nil, fmt.Errorf("%s: %s %s: %w", s.Name, method, r.Path, err)
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	if r.Body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %s %s: %w", s.Name, method, r.Path, err)
	}
	defer resp.Body.Close()
	if r.StopAt != nil {
		return &Response{Code: resp.StatusCode, Header: resp.Header, Body: readUntil(resp.Body, r.StopAt), User: s.User}, nil
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil && !isTimeout(err) {
		return nil, fmt.Errorf("%s: %s %s: reading the body: %w", s.Name, method, r.Path, err)
	}
	return &Response{Code: resp.StatusCode, Header: resp.Header, Body: b, User: s.User}, nil
}

// readUntil reads lines until stop says so or the stream ends.
func readUntil(body io.Reader, stop func([]byte) bool) []byte {
	var out []byte
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		out = append(append(out, sc.Bytes()...), '\n')
		if stop(sc.Bytes()) {
			break
		}
	}
	return out
}

func isTimeout(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "deadline exceeded") || strings.Contains(err.Error(), "context canceled"))
}

// Pair holds the answers of both sides to one request.
type Pair struct {
	Ref, SP *Response
}

// Both sends r to both sides at once and waits for both answers.
func Both(ctx context.Context, ref, sp *Side, r Request) (Pair, error) {
	type result struct {
		resp *Response
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		resp, err := sp.Do(ctx, r)
		ch <- result{resp, err}
	}()
	refResp, refErr := ref.Do(ctx, r)
	spRes := <-ch
	if refErr != nil {
		return Pair{}, refErr
	}
	if spRes.err != nil {
		return Pair{}, spRes.err
	}
	return Pair{Ref: refResp, SP: spRes.resp}, nil
}
