package authorization

import (
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// selectorNotes are what a review's status.evaluationError says about
// selectors that do not parse, as kube-apiserver words it: a selector
// with a bad requirement is "ignored", or "partially ignored" when others
// of its requirements parse (the field selector's note first).
func selectorNotes(res *authorizationv1.ResourceAttributes) []string {
	if res == nil {
		return nil
	}
	var notes []string
	if s := res.FieldSelector; s != nil {
		if parsed, bad := fieldRequirements(s); bad {
			notes = append(notes, ignoredNote("fieldSelector", parsed))
		}
	}
	if s := res.LabelSelector; s != nil {
		if parsed, bad := labelRequirements(s); bad {
			notes = append(notes, ignoredNote("labelSelector", parsed))
		}
	}
	return notes
}

func ignoredNote(selector string, parsed int) string {
	if parsed > 0 {
		return "spec.resourceAttributes." + selector + " partially ignored due to parse error"
	}
	return "spec.resourceAttributes." + selector + " ignored due to parse error"
}

// fieldRequirements counts the requirements of a field selector that
// parse and reports whether any does not: only In and NotIn with exactly
// one value are field requirements; the raw form is parsed whole (the
// requirements, when given, take its place).
func fieldRequirements(s *authorizationv1.FieldSelectorAttributes) (parsed int, bad bool) {
	if len(s.Requirements) == 0 {
		if s.RawSelector == "" {
			return 0, false
		}
		_, err := fields.ParseSelector(s.RawSelector)
		return 0, err != nil
	}
	for _, r := range s.Requirements {
		if (r.Operator == metav1.FieldSelectorOpIn || r.Operator == metav1.FieldSelectorOpNotIn) && len(r.Values) == 1 {
			parsed++
		} else {
			bad = true
		}
	}
	return parsed, bad
}

var labelOperators = map[metav1.LabelSelectorOperator]selection.Operator{
	metav1.LabelSelectorOpIn: selection.In, metav1.LabelSelectorOpNotIn: selection.NotIn,
	metav1.LabelSelectorOpExists: selection.Exists, metav1.LabelSelectorOpDoesNotExist: selection.DoesNotExist,
}

// labelRequirements is fieldRequirements for a label selector: a
// requirement parses when its operator is known and labels accepts its
// key and values.
func labelRequirements(s *authorizationv1.LabelSelectorAttributes) (parsed int, bad bool) {
	if len(s.Requirements) == 0 {
		if s.RawSelector == "" {
			return 0, false
		}
		_, err := labels.Parse(s.RawSelector)
		return 0, err != nil
	}
	for _, r := range s.Requirements {
		op, known := labelOperators[r.Operator]
		values := r.Values
		if len(values) == 0 {
			values = nil
		}
		if _, err := labels.NewRequirement(r.Key, op, values); known && err == nil {
			parsed++
		} else {
			bad = true
		}
	}
	return parsed, bad
}
