package printers

import (
	"testing"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCRDRows: kube-apiserver's CRD columns, served versions by version
// priority with the storage version marked, as recorded from it.
func TestCRDRows(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 11, 26, 1, 43, 54, 0, time.UTC))
	expectRow(t, "apiextensions.k8s.io", "CustomResourceDefinition", &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "others.compat.example.com", CreationTimestamp: created},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: "compat.example.com", Scope: apiextv1.ClusterScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Plural: "others", Kind: "Other", ShortNames: []string{"ot", "oth"}},
			Versions: []apiextv1.CustomResourceDefinitionVersion{
				{Name: "v1beta1", Served: true}, {Name: "v1alpha1"}, {Name: "v1", Served: true, Storage: true},
			},
		},
		Status: apiextv1.CustomResourceDefinitionStatus{Conditions: []apiextv1.CustomResourceDefinitionCondition{
			{Type: apiextv1.NamesAccepted, Status: apiextv1.ConditionTrue}, {Type: apiextv1.Established, Status: apiextv1.ConditionTrue},
		}},
	}, "others.compat.example.com", "Cluster", "v1(storage),v1beta1", "2026-11-26T01:43:54Z", "compat.example.com", "Other", "ot,oth", true)
}
