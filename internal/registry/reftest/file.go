package reftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// Env names the environment variable that switches Run to recording: the
// path of the reference's kubeconfig.
const Env = "SETPOINT_REFERENCE_KUBECONFIG"

// File is the content of a kind package's testdata/reference.json.
type File struct {
	// Namespaces are created before the cases run (and, when recording,
	// deleted before and after).
	Namespaces []string `json:"namespaces,omitempty"`
	// Cleanup are the paths of the cluster-scoped objects the cases
	// create, deleted before and after a recording so that it starts from
	// what a fresh server holds.
	Cleanup []string `json:"cleanup,omitempty"`
	Cases   []Case   `json:"cases"`
}

// Request is one HTTP request to the API server.
type Request struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	// Body is sent as is (JSON, or YAML for an apply patch written as
	// JSON).
	Body json.RawMessage `json:"body,omitempty"`
	// Edit makes a PUT a read-modify-write: the body is the object read
	// from Path (without its query) with Edit applied as a JSON merge
	// patch (null deletes a field).
	Edit json.RawMessage `json:"edit,omitempty"`
	// ContentType defaults to application/json, and to
	// application/merge-patch+json for a PATCH.
	ContentType string `json:"contentType,omitempty"`
	// Accept defaults to application/json.
	Accept string `json:"accept,omitempty"`
}

// Case is one request and the reference's answer to it.
type Case struct {
	Name string `json:"name"`
	// Setup requests are sent first, in order; each must succeed (a 2xx
	// answer), and their answers are not compared.
	Setup []Request `json:"setup,omitempty"`
	Request
	// Table, for a case that writes an object successfully, also reads
	// that object as a meta.k8s.io Table and compares it.
	Table bool `json:"table,omitempty"`
	// Ignore lists further dotted paths of the answer (and of its Table)
	// left out of the comparison.
	Ignore []string `json:"ignore,omitempty"`
	// Note explains the case's Ignore.
	Note string `json:"note,omitempty"`
	// Want is the reference's answer, normalized.
	Want *Answer `json:"want,omitempty"`
}

// Answer is a server's answer to a case, normalized.
type Answer struct {
	Code int `json:"code"`
	// Warnings are the Warning header values, in order.
	Warnings []string `json:"warnings,omitempty"`
	// Body is the decoded body (a string when it is not JSON).
	Body any `json:"body,omitempty"`
	// Table is the written object as a Table, for a case with Table set.
	Table any `json:"table,omitempty"`
}

// Load reads a File.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	seen := map[string]bool{}
	for _, c := range f.Cases {
		if seen[c.Name] {
			return nil, fmt.Errorf("%s: two cases named %q", path, c.Name)
		}
		seen[c.Name] = true
	}
	return &f, nil
}

// Save writes f to path, indented, with a final newline.
func (f *File) Save(path string) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
