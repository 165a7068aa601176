package apiserver

import (
	"context"
	"fmt"
	"net/url"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// EnvOf returns what the registry's hooks see of s.
func EnvOf(s *Server) registry.Env { return s.env() }

// ListBodyAsObject is the body of an unpaged list of gvr in namespace
// ("" for all) selected by labelSelector, served from the watch cache and
// encoded as one list object in mt ("json" or "protobuf"): the encoding
// the item-by-item list must match.
func ListBodyAsObject(s *Server, gvr schema.GroupVersionResource, namespace, labelSelector, mt string) ([]byte, error) {
	e := s.entry(gvr)
	if e == nil {
		return nil, fmt.Errorf("no resource %s", gvr)
	}
	sel, err := parseSelectors(url.Values{"labelSelector": {labelSelector}})
	if err != nil {
		return nil, err
	}
	list, err := s.cachedList(context.Background(), e, requestInfo{Namespace: namespace}, readVersion{}, sel)
	if err != nil {
		return nil, err
	}
	return encodeList(s, list, mt)
}

// PagedListBodyAsObject is ListBodyAsObject for one page of a list of the
// namespace: limit items from the continue token cont ("" for the first
// page), as a consistent read.
func PagedListBodyAsObject(s *Server, gvr schema.GroupVersionResource, namespace string, limit int64, cont, mt string) ([]byte, error) {
	e := s.entry(gvr)
	if e == nil {
		return nil, fmt.Errorf("no resource %s", gvr)
	}
	list, err := s.pagedList(context.Background(), e, requestInfo{Namespace: namespace}, readVersion{}, selectors{}, limit, cont)
	if err != nil {
		return nil, err
	}
	return encodeList(s, list, mt)
}

// encodeList is the old whole-object encoding of list, in JSON or (mt
// "protobuf") protobuf.
func encodeList(s *Server, list runtime.Object, mt string) ([]byte, error) {
	m := mediaType{Type: mimeJSON}
	if mt == "protobuf" {
		m.Type = mimeProtobuf
	}
	b, _, err := s.resp.encode(m, list)
	return b, err
}
