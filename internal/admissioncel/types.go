package admissioncel

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/traits"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// Result types of the expression fields.
var (
	BoolResult       = []*cel.Type{cel.BoolType}
	StringResult     = []*cel.Type{cel.StringType}
	AnnotationResult = []*cel.Type{cel.StringType, cel.NullType}
	AnyResult        = []*cel.Type{cel.AnyType, cel.DynType}
	ApplyResult      = []*cel.Type{cel.ObjectType("Object")}
	JSONPatchResult  = []*cel.Type{cel.ListType(cel.ObjectType("JSONPatch"))}
)

// CheckType returns nil when got is one of want, else kube-apiserver's
// message ("must evaluate to bool but got string").
func CheckType(got *cel.Type, want []*cel.Type) error {
	for _, t := range want {
		if got.IsExactType(t) || cel.AnyType.IsExactType(t) {
			return nil
		}
	}
	if len(want) == 1 {
		return fmt.Errorf("must evaluate to %v but got %v", want[0].String(), got.String())
	}
	return fmt.Errorf("must evaluate to one of %v but got %v", want, got.String())
}

// DeclType converts a CEL type to the declared type of a variables field.
func DeclType(t *cel.Type) *apiservercel.DeclType {
	if t == nil {
		return apiservercel.DynType
	}
	switch t {
	case cel.AnyType:
		return apiservercel.AnyType
	case cel.BoolType:
		return apiservercel.BoolType
	case cel.BytesType:
		return apiservercel.BytesType
	case cel.DoubleType:
		return apiservercel.DoubleType
	case cel.DurationType:
		return apiservercel.DurationType
	case cel.IntType:
		return apiservercel.IntType
	case cel.NullType:
		return apiservercel.NullType
	case cel.StringType:
		return apiservercel.StringType
	case cel.TimestampType:
		return apiservercel.TimestampType
	case cel.UintType:
		return apiservercel.UintType
	}
	if t.HasTrait(traits.ContainerType) && t.HasTrait(traits.IndexerType) {
		switch ps := t.Parameters(); len(ps) {
		case 1:
			return apiservercel.NewListType(DeclType(ps[0]), -1)
		case 2:
			return apiservercel.NewMapType(DeclType(ps[0]), DeclType(ps[1]), -1)
		}
	}
	return apiservercel.DynType
}
