package certmanager

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// runtimeFromUnstructured converts a part of an unstructured object into a typed value.
func runtimeFromUnstructured(in any, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

func apiutilGVK(c client.Client, obj client.Object) (schema.GroupVersionKind, error) {
	return apiutil.GVKForObject(obj, c.Scheme())
}
