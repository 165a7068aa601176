package fake

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/client"
)

func setList(list client.ObjectList, items []runtime.Object) error {
	if err := meta.SetList(list, items); err != nil {
		return fmt.Errorf("fake: fill %T: %w", list, err)
	}
	return nil
}
