package packages

import (
	"fmt"
	"strings"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
)

func conditions(cs []kappctrlv1alpha1.Condition) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("{%s %s}", c.Type, c.Status))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
