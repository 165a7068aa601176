package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DeepCopyInto copies d into out; they share no memory afterwards.
func (d *Database) DeepCopyInto(out *Database) {
	*out = *d
	d.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = d.Spec // only value fields
	d.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a copy of d sharing no memory with it.
func (d *Database) DeepCopy() *Database {
	if d == nil {
		return nil
	}
	out := new(Database)
	d.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (d *Database) DeepCopyObject() runtime.Object {
	if c := d.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies s into out; they share no memory afterwards.
func (s *DatabaseStatus) DeepCopyInto(out *DatabaseStatus) {
	*out = *s
	if s.PhaseTransitionTime != nil {
		out.PhaseTransitionTime = s.PhaseTransitionTime.DeepCopy()
	}
	if s.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(s.Conditions))
		for i := range s.Conditions {
			s.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
}

// DeepCopyInto copies l into out; they share no memory afterwards.
func (l *DatabaseList) DeepCopyInto(out *DatabaseList) {
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Database, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a copy of l sharing no memory with it.
func (l *DatabaseList) DeepCopy() *DatabaseList {
	if l == nil {
		return nil
	}
	out := new(DatabaseList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *DatabaseList) DeepCopyObject() runtime.Object {
	if c := l.DeepCopy(); c != nil {
		return c
	}
	return nil
}
