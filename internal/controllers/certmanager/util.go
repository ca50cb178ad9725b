package certmanager

import "encoding/json"

// runtimeFromUnstructured converts a part of an unstructured object into a typed value.
func runtimeFromUnstructured(in any, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}
