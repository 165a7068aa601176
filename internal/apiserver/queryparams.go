package apiserver

import (
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var metaTimeType = reflect.TypeFor[metav1.Time]()

// decodeQueryOptions fills the options object of a connect subresource
// (PodLogOptions, PodExecOptions, …) from query parameters named by its
// fields' JSON names, as Kubernetes' parameter codec does: strings, bools,
// integers, repeated strings (command=a&command=b) and integers
// (ports=80&ports=8080), RFC 3339 times, each possibly behind a pointer; a
// parameter given twice for a single value takes the first. Unknown
// parameters are ignored; a value that does not parse is a 400 with the
// parser's message, as kube-apiserver answers.
func decodeQueryOptions(q url.Values, into runtime.Object) error {
	v := reflect.ValueOf(into).Elem()
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		vals, ok := q[name]
		if f.Anonymous || name == "" || name == "-" || !ok || len(vals) == 0 {
			continue
		}
		if err := setField(v.Field(i), vals); err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
	}
	return nil
}

func setField(fv reflect.Value, vals []string) error {
	if fv.Kind() == reflect.Pointer {
		elem := reflect.New(fv.Type().Elem())
		if err := setField(elem.Elem(), vals); err != nil {
			return err
		}
		fv.Set(elem)
		return nil
	}
	raw := vals[0]
	switch {
	case fv.Type() == metaTimeType:
		ts, err := time.Parse(time.RFC3339, raw)
		if err != nil {
			return err
		}
		fv.Set(reflect.ValueOf(metav1.NewTime(ts)))
	case fv.Kind() == reflect.String:
		fv.SetString(raw)
	case fv.Kind() == reflect.Bool:
		fv.SetBool(parseQueryBool(raw))
	case fv.Kind() == reflect.Int || fv.Kind() == reflect.Int32 || fv.Kind() == reflect.Int64:
		n, err := strconv.ParseInt(raw, 10, fv.Type().Bits())
		if err != nil {
			return err
		}
		fv.SetInt(n)
	case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Int32:
		s := reflect.MakeSlice(fv.Type(), len(vals), len(vals))
		for i, v := range vals {
			n, err := strconv.ParseUint(v, 10, 16)
			if err != nil {
				return fmt.Errorf("cannot convert to []int32: %w", err)
			}
			s.Index(i).SetInt(int64(n))
		}
		fv.Set(s)
	case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.String:
		s := reflect.MakeSlice(fv.Type(), len(vals), len(vals))
		for i, v := range vals {
			s.Index(i).SetString(v)
		}
		fv.Set(s)
	default:
		return fmt.Errorf("unsupported parameter type %s", fv.Type())
	}
	return nil
}
