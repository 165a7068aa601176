package apiserver

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/audit"
	"github.com/setpoint-dev/setpoint/internal/watchcache"
)

// A list served from the watch cache is written item by item from the
// items' shared encodings (watchcache.Item: cut from the objects' watch
// frames, made once per object state), not encoded as one list object into
// one buffer: the list's own fields come from encoding the list with no
// items, the items follow in chunks of up to watchChunk bytes. The body is
// byte for byte the encoding of the whole list (liststream_test.go checks
// it), with the same Content-Length, for JSON and protobuf; other views
// (YAML, Table, PartialObjectMetadata), custom resources (unstructured) and
// requests whose audit records the answer's object take the list object's
// path.

// errItemList: a list's items could not be written from their shared
// encodings; nothing was written, and the list object's path can answer.
var errItemList = errors.New("list not written from its items' encodings")

// streamsList tells whether a list in mt of e is written by writeItemList.
func streamsList(r *http.Request, mt mediaType, e *entry) bool {
	return mt.As == "" && (mt.Type == mimeJSON || mt.Type == mimeProtobuf) &&
		!e.res.Unstructured && r.Method == http.MethodGet && !audit.RecordsResponseObject(r.Context())
}

// itemListFailed tells whether err is writeItemList's failure to write
// the items from their encodings, and logs it: the list object's path
// answers instead.
func (s *Server) itemListFailed(e *entry, err error) bool {
	if !errors.Is(err, errItemList) {
		return false
	}
	s.log.Warn("list written as one object", "resource", e.res.GVR().String(), "err", err)
	return true
}

// listBody is a list response in pieces to write one after the other.
type listBody struct {
	parts [][]byte
	size  int
}

func (b *listBody) add(p ...[]byte) {
	for _, q := range p {
		b.parts = append(b.parts, q)
		b.size += len(q)
	}
}

// writeItemList writes the list empty (the list object with no items: kind,
// apiVersion, metadata) filled with items, in the format of mt.
func (s *Server) writeItemList(w http.ResponseWriter, mt mediaType, empty runtime.Object, items []watchcache.Item) error {
	var body *listBody
	var err error
	if mt.Type == mimeProtobuf {
		body, err = s.protoItemList(empty, items)
	} else {
		body, err = s.jsonItemList(empty, items)
	}
	if err != nil {
		return fmt.Errorf("%w: %v", errItemList, err)
	}
	h := w.Header()
	h.Set("Content-Type", mt.Type)
	h.Set("Content-Length", strconv.Itoa(body.size))
	h.Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	buf := s.watchWriters.buffer()
	defer func() {
		buf.Reset()
		s.watchWriters.bufs.Put(buf)
	}()
	for _, p := range body.parts {
		if buf.Len()+len(p) > watchChunk && buf.Len() > 0 {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return nil // the client went away
			}
			buf.Reset()
		}
		if len(p) >= watchChunk {
			if _, err := w.Write(p); err != nil {
				return nil
			}
			continue
		}
		buf.Write(p)
	}
	if buf.Len() > 0 {
		_, _ = w.Write(buf.Bytes())
	}
	return nil
}

var (
	jsonItemsEnd = []byte("]}\n")
	jsonOpen     = []byte("{")
	jsonComma    = []byte(",{")
)

// jsonItemList is the JSON list: the empty list's encoding, which ends in
// "items":[]}\n (items is the last field of every typed list), opened
// between its brackets for the items.
func (s *Server) jsonItemList(empty runtime.Object, items []watchcache.Item) (*listBody, error) {
	var head bytes.Buffer
	if err := s.codecs.JSON.Encode(empty, &head); err != nil {
		return nil, err
	}
	h := head.Bytes()
	if !bytes.HasSuffix(h, []byte(`"items":[]}`+"\n")) {
		return nil, fmt.Errorf("encoding of an empty %T does not end with its items", empty)
	}
	body := &listBody{parts: make([][]byte, 0, 2*len(items)+2)}
	body.add(h[:len(h)-len(jsonItemsEnd)])
	for i, it := range items {
		rest, err := it.ListJSON()
		if err != nil {
			return nil, err
		}
		sep := jsonComma
		if i == 0 {
			sep = jsonOpen
		}
		body.add(sep, rest)
	}
	body.add(jsonItemsEnd)
	return body, nil
}

// protoItemList is the protobuf list: the empty list's encoding ("k8s\x00"
// and a runtime.Unknown whose raw, field 2, is the list's message) with
// the items appended to that message as its field 2 (items; the list's
// metadata is field 1, so they follow it as the list's own encoding puts
// them), the raw's length grown by theirs.
func (s *Server) protoItemList(empty runtime.Object, items []watchcache.Item) (*listBody, error) {
	var head bytes.Buffer
	if err := s.codecs.Proto.Encode(empty, &head); err != nil {
		return nil, err
	}
	h := head.Bytes()
	const magic = "k8s\x00"
	if !bytes.HasPrefix(h, []byte(magic)) {
		return nil, errors.New("protobuf list encoding without its magic")
	}
	tagStart, start, end, err := protoRawBounds(h, len(magic))
	if err != nil {
		return nil, fmt.Errorf("protobuf encoding of an empty %T: %w", empty, err)
	}
	body := &listBody{parts: make([][]byte, 0, 2*len(items)+4)}
	itemsSize := 0
	raws := make([][]byte, len(items))
	for i, it := range items {
		raw, err := it.ListProto()
		if err != nil {
			return nil, err
		}
		raws[i] = raw
		itemsSize += 1 + protowire.SizeVarint(uint64(len(raw))) + len(raw)
	}
	rawSize := end - start + itemsSize
	// Everything before the raw field, its tag and new length, the list's
	// own fields, the items, then the envelope's fields after raw.
	rawHead := protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.BytesType), uint64(rawSize))
	body.add(h[:tagStart], rawHead, h[start:end])
	headers := make([]byte, 0, len(items)*(1+binaryMaxVarint))
	for _, raw := range raws {
		n := len(headers)
		headers = protowire.AppendVarint(protowire.AppendTag(headers, 2, protowire.BytesType), uint64(len(raw)))
		body.add(headers[n:len(headers):len(headers)], raw)
	}
	body.add(h[end:])
	return body, nil
}

// binaryMaxVarint is the most bytes of an item's length varint.
const binaryMaxVarint = 10

// protoRawBounds finds, in the runtime.Unknown that starts at offset off of
// b, its raw field (2): the field's tag starts at b[tag], its bytes are
// b[start:end]. The field must occur once.
func protoRawBounds(b []byte, off int) (tag, start, end int, err error) {
	found := false
	for p := off; p < len(b); {
		num, typ, n := protowire.ConsumeTag(b[p:])
		if n < 0 {
			return 0, 0, 0, protowire.ParseError(n)
		}
		fieldStart := p
		p += n
		if num == 2 && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b[p:])
			if n < 0 {
				return 0, 0, 0, protowire.ParseError(n)
			}
			if found {
				return 0, 0, 0, errors.New("raw field repeated")
			}
			found, tag, start, end = true, fieldStart, p+n-len(v), p+n
			p += n
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b[p:])
		if n < 0 {
			return 0, 0, 0, protowire.ParseError(n)
		}
		p += n
	}
	if !found {
		return 0, 0, 0, errors.New("no raw field")
	}
	return tag, start, end, nil
}
