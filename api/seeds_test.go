// Package api_test proves that the YAML objects of seeds/002 decode strictly into slipway's API
// types and are accepted unchanged by a real API server with slipway's CRDs installed.
package api_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	//lint:ignore SA1019 seeds/002 shows its Clusters as cluster.x-k8s.io/v1beta1, which Cluster API still serves.
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/scheme"
	"github.com/slipway-dev/slipway/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) { env = e }))
}

// decodeScheme knows, besides the kinds slipway serves, Cluster API's v1beta1 Cluster, which
// seeds/002 shows.
func decodeScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := scheme.New()
	if err := clusterv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSeeds002Objects(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "seeds002", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no seeds/002 fixtures found: %v", err)
	}
	s := decodeScheme(t)
	for _, file := range files {
		docs := readDocuments(t, file)
		for i, doc := range docs {
			t.Run(fmt.Sprintf("%s#%d", filepath.Base(file), i), func(t *testing.T) {
				obj := decodeStrict(t, s, doc)
				encoded := roundTrip(t, s, obj)
				namespace := "seeds-" + strings.ToLower(strings.TrimSuffix(filepath.Base(file), ".yaml"))
				applyAndCompare(t, doc, encoded, namespace)
			})
		}
	}
}

func readDocuments(t *testing.T, file string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, doc)
		}
	}
	return docs
}

// decodeStrict decodes a document into the typed object of its kind, rejecting unknown and
// duplicate fields.
func decodeStrict(t *testing.T, s *runtime.Scheme, doc []byte) runtime.Object {
	t.Helper()
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		t.Fatal(err)
	}
	gvk := meta.GroupVersionKind()
	obj, err := s.New(gvk)
	if err != nil {
		t.Fatalf("no type for %s: %v", gvk, err)
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		t.Fatalf("%s does not decode strictly: %v", gvk.Kind, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj
}

// roundTrip checks that the typed object is stable through its JSON encoding, and returns the
// encoding.
func roundTrip(t *testing.T, s *runtime.Scheme, obj runtime.Object) []byte {
	t.Helper()
	encoded, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.New(obj.GetObjectKind().GroupVersionKind())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(encoded, again); err != nil {
		t.Fatal(err)
	}
	again.GetObjectKind().SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	if !reflect.DeepEqual(obj, again) {
		t.Errorf("typed object changes through JSON:\n%#v\n%#v", obj, again)
	}
	return encoded
}

// applyAndCompare creates the document as written on the API server with strict field validation
// (status through the status subresource) and checks the server kept every field. It first
// creates the typed object's encoding in a dry run, and checks the server reads it as it reads
// the document: what slipway's controllers write means what the user wrote.
func applyAndCompare(t *testing.T, doc, encoded []byte, namespace string) {
	t.Helper()
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := env.Client.Create(ctx, ns); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(doc, &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetNamespace(namespace)
	status, hasStatus := u.Object["status"]
	strict := client.FieldValidation(metav1.FieldValidationStrict)

	typed := &unstructured.Unstructured{}
	if err := json.Unmarshal(encoded, &typed.Object); err != nil {
		t.Fatal(err)
	}
	typed.SetNamespace(namespace)
	if err := env.Client.Create(ctx, typed, strict, client.DryRunAll); err != nil {
		t.Fatalf("API server rejects the typed encoding of %s %s: %v", u.GetKind(), u.GetName(), err)
	}

	if err := env.Client.Create(ctx, u, strict); err != nil {
		t.Fatalf("API server rejects %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	if hasStatus {
		u.Object["status"] = status
		if err := env.Client.Status().Update(ctx, u, client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
			t.Fatalf("API server rejects the status of %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
		t.Fatal(err)
	}
	want := yamlToJSONValue(t, doc).(map[string]interface{})
	delete(want["metadata"].(map[string]interface{}), "namespace")
	gotJSON, err := json.Marshal(got.Object)
	if err != nil {
		t.Fatal(err)
	}
	if missing := missingFields(t, want, jsonValue(t, gotJSON)); len(missing) > 0 {
		t.Errorf("the API server pruned or changed %v", missing)
	}
	if !slipwayServes(u.GroupVersionKind().Group) {
		// Cluster API's Go types are Cluster API's: only their acceptance is checked here.
		return
	}
	for _, field := range []string{"spec", "data"} {
		if !reflect.DeepEqual(jsonValue(t, mustJSON(t, typed.Object[field])), jsonValue(t, mustJSON(t, got.Object[field]))) {
			t.Errorf("the typed encoding's %s means something else to the API server:\ntyped: %v\ndocument: %v",
				field, typed.Object[field], got.Object[field])
		}
	}
}

func slipwayServes(group string) bool {
	return group == "" || strings.HasSuffix(group, ".tanzu.vmware.com") || strings.HasSuffix(group, "packaging.carvel.dev")
}

func mustJSON(t *testing.T, v interface{}) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func yamlToJSONValue(t *testing.T, doc []byte) interface{} {
	t.Helper()
	data, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	return jsonValue(t, data)
}

func jsonValue(t *testing.T, data []byte) interface{} {
	t.Helper()
	var v interface{}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// missingFields lists the paths of want whose values are absent or different in got; got may
// hold more (defaults, metadata the server adds).
func missingFields(t *testing.T, want, got interface{}) []string {
	t.Helper()
	var missing []string
	var walk func(path string, want, got interface{})
	walk = func(path string, want, got interface{}) {
		switch w := want.(type) {
		case map[string]interface{}:
			g, ok := got.(map[string]interface{})
			if !ok {
				missing = append(missing, path)
				return
			}
			for k, v := range w {
				walk(path+"."+k, v, g[k])
			}
		case []interface{}:
			g, ok := got.([]interface{})
			if !ok || len(g) != len(w) {
				missing = append(missing, path)
				return
			}
			for i := range w {
				walk(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])
			}
		default:
			if !reflect.DeepEqual(want, got) {
				missing = append(missing, fmt.Sprintf("%s (want %v, got %v)", path, want, got))
			}
		}
	}
	walk("", want, got)
	return missing
}
