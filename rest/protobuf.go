package rest

import (
	"encoding/binary"
	"fmt"
	"io"
	"mime"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/scheme"
)

// Media types of Config.ContentType and AcceptContentTypes.
const (
	ContentTypeJSON     = "application/json"
	ContentTypeProtobuf = "application/vnd.kubernetes.protobuf"
)

// defaultProtobufAccept is the Accept of a protobuf client without
// AcceptContentTypes: protobuf first, JSON for what has no protobuf form,
// as Kubernetes' components ask.
const defaultProtobufAccept = ContentTypeProtobuf + ", " + ContentTypeJSON

// protoMessage is what a type needs to travel in protobuf: the generated
// Marshal and Unmarshal of the k8s.io/api types.
type protoMessage interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// protoCapable reports whether obj's type has a protobuf form the client's
// scheme knows (built-in kinds; not unstructured objects nor types of
// custom resources).
func protoCapable(codecs *scheme.Codecs, obj runtime.Object) bool {
	if _, ok := obj.(protoMessage); !ok {
		return false
	}
	kinds, _, err := codecs.Scheme.ObjectKinds(obj)
	return err == nil && len(kinds) > 0
}

// isProtobuf reports whether a Content-Type header names protobuf (with or
// without ;stream=watch).
func isProtobuf(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == ContentTypeProtobuf
}

// wantsProtobuf reports whether a Config.ContentType asks for protobuf.
func wantsProtobuf(contentType string) bool {
	return strings.TrimSpace(contentType) != "" && isProtobuf(contentType)
}

// maxProtoFrame bounds one frame of a protobuf watch stream, as the largest
// object the server stores is far below it.
const maxProtoFrame = 64 << 20

// readProtoFrame reads one length-prefixed frame of a protobuf watch stream
// into buf (grown as needed) and returns it.
func readProtoFrame(r io.Reader, buf []byte) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxProtoFrame {
		return nil, fmt.Errorf("watch frame of %d bytes exceeds the limit of %d", n, maxProtoFrame)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}
