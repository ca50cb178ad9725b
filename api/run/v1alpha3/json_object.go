package v1alpha3

import "encoding/json"

// JSONObject is a free-form JSON object, such as the reference to a machine image or inline
// package values. Its CRD schema preserves unknown fields.
//
// +kubebuilder:object:generate=false
type JSONObject map[string]interface{}

// DeepCopyInto copies the object into out through its JSON form, which is what it holds.
func (in JSONObject) DeepCopyInto(out *JSONObject) {
	if in == nil {
		*out = nil
		return
	}
	data, err := json.Marshal(in)
	if err != nil {
		// A JSONObject holds only what JSON decoding produced; anything else is a programming error.
		panic("JSONObject holds a value that is not JSON: " + err.Error())
	}
	copied := JSONObject{}
	if err := json.Unmarshal(data, &copied); err != nil {
		panic("JSONObject holds a value that is not JSON: " + err.Error())
	}
	*out = copied
}

// DeepCopy returns a deep copy of the object.
func (in JSONObject) DeepCopy() JSONObject {
	if in == nil {
		return nil
	}
	var out JSONObject
	in.DeepCopyInto(&out)
	return out
}
