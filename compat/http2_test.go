package compat

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

// TestHTTP2MaxConcurrentStreams: both servers announce, in the SETTINGS
// frame that opens every HTTP/2 connection, that a client may open at
// most 100 concurrent streams on it (kube-apiserver's default, 0 for
// --http2-max-streams-per-connection). That is what a client sees of the
// limit: Go's HTTP/2 client opens another connection beyond it rather
// than wait, and client-go's watches each hold a stream. The same frame's
// initial stream window and largest frame are compared too
// (kube-apiserver shrinks both to 256 KiB).
func TestHTTP2MaxConcurrentStreams(t *testing.T) {
	rep := difftest.NewReport(t, env.allow, "protocol", env.sink)
	defer rep.Finish()
	got := map[string]map[string]any{}
	for _, side := range []*difftest.Side{env.ref, env.sp} {
		settings, err := http2Settings(t.Context(), env.kubeconfigs[side.Name])
		if err != nil {
			t.Fatalf("%s: %v", side.Name, err)
		}
		t.Logf("%s: SETTINGS %v", side.Name, settings)
		got[side.Name] = map[string]any{}
		for name, id := range map[string]http2.SettingID{"maxConcurrentStreams": http2.SettingMaxConcurrentStreams,
			"initialWindowSize": http2.SettingInitialWindowSize, "maxFrameSize": http2.SettingMaxFrameSize} {
			got[side.Name][name] = difftest.Absent
			if v, ok := settings[id]; ok {
				got[side.Name][name] = difftest.Number(int(v))
			}
		}
		v, ok := settings[http2.SettingMaxConcurrentStreams]
		if !ok || v != 100 {
			t.Errorf("%s announces SETTINGS_MAX_CONCURRENT_STREAMS %d (present %v), want 100", side.Name, v, ok)
		}
	}
	rep.Compare("protocol/http2 settings", got[env.ref.Name], got[env.sp.Name])
}

// http2Settings opens an HTTP/2 connection to the server of kubeconfig (its
// CA and client certificate, ALPN h2), sends the client preface and an
// empty SETTINGS frame, and returns the settings of the server's first
// SETTINGS frame.
func http2Settings(ctx context.Context, kubeconfig string) (map[http2.SettingID]uint32, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(kubeconfig))
	if err != nil {
		return nil, err
	}
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, err
	}
	if tlsCfg == nil {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	tlsCfg = tlsCfg.Clone()
	tlsCfg.NextProtos = []string{http2.NextProtoTLS}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := (&tls.Dialer{Config: tlsCfg}).DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if p := conn.(*tls.Conn).ConnectionState().NegotiatedProtocol; p != http2.NextProtoTLS {
		return nil, fmt.Errorf("ALPN negotiated %q, not h2", p)
	}
	return readSettings(conn)
}

// readSettings speaks the client's side of an HTTP/2 connection's start
// and reads frames up to the server's first (non-ACK) SETTINGS frame.
func readSettings(conn net.Conn) (map[http2.SettingID]uint32, error) {
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		return nil, err
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		return nil, err
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return nil, fmt.Errorf("read frame: %w", err)
		}
		sf, ok := f.(*http2.SettingsFrame)
		if !ok || sf.IsAck() {
			continue
		}
		out := map[http2.SettingID]uint32{}
		err = sf.ForeachSetting(func(s http2.Setting) error {
			out[s.ID] = s.Val
			return nil
		})
		return out, err
	}
}
