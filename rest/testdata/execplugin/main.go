// Command execplugin is a client-go style exec credential plugin for the
// rest package's tests. Each run appends KUBERNETES_EXEC_INFO, its args
// and the PLUGIN_ENV variable to $PLUGIN_DIR/runs (one JSON line per run)
// and prints an ExecCredential of $PLUGIN_API_VERSION whose token is line
// N of $PLUGIN_DIR/tokens for the Nth run (the last line once past the
// end), with the client certificate and key of $PLUGIN_DIR/cert.pem and
// key.pem when present, expiring at $PLUGIN_DIR/expiry (RFC 3339) when
// present.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	dir := os.Getenv("PLUGIN_DIR")
	runs, _ := os.ReadFile(filepath.Join(dir, "runs"))
	n := strings.Count(string(runs), "\n")
	line, _ := json.Marshal(map[string]any{"info": os.Getenv("KUBERNETES_EXEC_INFO"), "args": os.Args[1:], "env": os.Getenv("PLUGIN_ENV")})
	f, err := os.OpenFile(filepath.Join(dir, "runs"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(f, "%s\n", line)
	f.Close()
	status := map[string]any{}
	if b, err := os.ReadFile(filepath.Join(dir, "tokens")); err == nil {
		tokens := strings.Fields(string(b))
		status["token"] = tokens[min(n, len(tokens)-1)]
	}
	if cert, err := os.ReadFile(filepath.Join(dir, "cert.pem")); err == nil {
		key, _ := os.ReadFile(filepath.Join(dir, "key.pem"))
		status["clientCertificateData"], status["clientKeyData"] = string(cert), string(key)
	}
	if exp, err := os.ReadFile(filepath.Join(dir, "expiry")); err == nil {
		status["expirationTimestamp"] = strings.TrimSpace(string(exp))
	}
	if len(status) == 0 {
		os.Exit(3)
	}
	out, _ := json.Marshal(map[string]any{"apiVersion": os.Getenv("PLUGIN_API_VERSION"), "kind": "ExecCredential", "status": status})
	os.Stdout.Write(out)
}
