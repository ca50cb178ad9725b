package components

import (
	"os"
	"strings"
)

// podNamespace returns the namespace of the pod a component runs in: $POD_NAMESPACE when its
// manifest sets it, else its service account's namespace file.
func podNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	data, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}
