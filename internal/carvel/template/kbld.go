package template

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/carvel/bundle"
)

// kbld replaces every "image" value found in images.yml with its locked reference. The paths
// name the input ("-") and the lock files, relative to the fetched directory.
func kbld(spec *kappctrlv1alpha1.AppTemplateKbld, dir string, previous []byte) ([]byte, error) {
	replace := map[string]string{}
	input := previous
	for _, p := range spec.Paths {
		if p == stdin {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			return nil, fmt.Errorf("kbld path %q: %w", p, err)
		}
		lock, ok := bundle.ParseImagesLock(data)
		if !ok {
			// Not a lock file: configuration to resolve.
			input = append(append(input, []byte("\n---\n")...), data...)
			continue
		}
		for _, img := range lock.Images {
			if id := img.Annotations[bundle.AnnotationKbldID]; id != "" {
				replace[id] = img.Image
			}
		}
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(input), 4096)
	var out bytes.Buffer
	for {
		var doc interface{}
		if err := decoder.Decode(&doc); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("kbld: %w", err)
		}
		if doc == nil {
			continue
		}
		data, err := yaml.Marshal(resolveImages(doc, replace))
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(data)
	}
	return out.Bytes(), nil
}

func resolveImages(v interface{}, replace map[string]string) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		for k, val := range t {
			if s, ok := val.(string); ok && k == "image" {
				if r, ok := replace[s]; ok {
					t[k] = r
				}
				continue
			}
			t[k] = resolveImages(val, replace)
		}
	case []interface{}:
		for i := range t {
			t[i] = resolveImages(t[i], replace)
		}
	}
	return v
}
