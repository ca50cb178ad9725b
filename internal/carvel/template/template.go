// Package template is the second stage of an App: it renders the fetched configuration with ytt
// (as a library, with data values from Secrets, ConfigMaps and files) and resolves image
// references from an imgpkg bundle's .imgpkg/images.yml as kbld does.
package template

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	yttcmd "carvel.dev/ytt/pkg/cmd/template"
	yttui "carvel.dev/ytt/pkg/cmd/ui"
	yttfiles "carvel.dev/ytt/pkg/files"
	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// stdin is the path that names the previous step's output.
const stdin = "-"

// Template runs the template steps over the fetched directory and returns the YAML stream.
func Template(ctx context.Context, c client.Client, namespace string, steps []kappctrlv1alpha1.AppTemplate, dir string) ([]byte, error) {
	if len(steps) == 0 {
		return nil, errors.New("spec.template is empty: an App needs at least one template step")
	}
	var out []byte
	for i, step := range steps {
		var err error
		switch {
		case step.Ytt != nil:
			out, err = ytt(ctx, c, namespace, step.Ytt, dir, out, i == 0)
		case step.Kbld != nil:
			out, err = kbld(step.Kbld, dir, out)
		default:
			err = errors.New("only ytt and kbld templates are supported by slipway's rendering (helmTemplate, kustomize, jsonnet, sops and cue are not)")
		}
		if err != nil {
			return nil, fmt.Errorf("spec.template[%d]: %w", i, err)
		}
	}
	return out, nil
}

func ytt(ctx context.Context, c client.Client, namespace string, spec *kappctrlv1alpha1.AppTemplateYtt, dir string, previous []byte, first bool) ([]byte, error) {
	var inputs []*yttfiles.File
	paths := spec.Paths
	if len(paths) == 0 {
		paths = []string{"."}
		if !first {
			paths = []string{stdin}
		}
	}
	for _, p := range paths {
		if p == stdin {
			f, err := yttfiles.NewFileFromSource(yttfiles.NewBytesSource("stdin.yml", previous))
			if err != nil {
				return nil, err
			}
			inputs = append(inputs, f)
			continue
		}
		found, err := yttfiles.NewSortedFilesFromPaths([]string{filepath.Join(dir, p)}, yttfiles.SymlinkAllowOpts{})
		if err != nil {
			return nil, fmt.Errorf("ytt path %q: %w", p, err)
		}
		inputs = append(inputs, found...)
	}
	if spec.Inline != nil {
		for _, name := range sortedKeys(spec.Inline.Paths) {
			f, err := yttfiles.NewFileFromSource(yttfiles.NewBytesSource(name, []byte(spec.Inline.Paths[name])))
			if err != nil {
				return nil, err
			}
			inputs = append(inputs, f)
		}
	}
	valueFiles, cleanup, err := valuesFiles(ctx, c, namespace, spec.ValuesFrom, dir)
	defer cleanup()
	if err != nil {
		return nil, err
	}
	opts := yttcmd.NewOptions()
	opts.IgnoreUnknownComments = spec.IgnoreUnknownComments
	opts.StrictYAML = spec.Strict
	opts.DataValuesFlags.FromFiles = valueFiles
	var stderr bytes.Buffer
	out := opts.RunWithFiles(yttcmd.Input{Files: yttfiles.NewSortedFiles(inputs)}, yttui.NewCustomWriterTTY(false, &stderr, &stderr))
	if out.Err != nil {
		return nil, fmt.Errorf("ytt: %w", out.Err)
	}
	return out.DocSet.AsBytes()
}

// valuesFiles writes every values source to a file, in order, for ytt's --data-values-file.
func valuesFiles(ctx context.Context, c client.Client, namespace string, sources []kappctrlv1alpha1.AppTemplateValuesSource, dir string) ([]string, func(), error) {
	tmp, err := os.MkdirTemp("", "slipway-values-")
	if err != nil {
		return nil, func() {}, err
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	var files []string
	for i, src := range sources {
		data := map[string][]byte{}
		switch {
		case src.SecretRef != nil:
			s := &corev1.Secret{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: src.SecretRef.Name}, s); err != nil {
				return nil, cleanup, fmt.Errorf("valuesFrom[%d]: Secret %s: %w", i, src.SecretRef.Name, err)
			}
			data = s.Data
		case src.ConfigMapRef != nil:
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: src.ConfigMapRef.Name}, cm); err != nil {
				return nil, cleanup, fmt.Errorf("valuesFrom[%d]: ConfigMap %s: %w", i, src.ConfigMapRef.Name, err)
			}
			for k, v := range cm.Data {
				data[k] = []byte(v)
			}
		case src.Path != "":
			files = append(files, filepath.Join(dir, src.Path))
			continue
		default:
			return nil, cleanup, fmt.Errorf("valuesFrom[%d]: only secretRef, configMapRef and path are supported", i)
		}
		for _, k := range sortedKeys(data) {
			path := filepath.Join(tmp, fmt.Sprintf("%03d-%s", i, filepath.Base(k)))
			if err := os.WriteFile(path, data[k], 0o600); err != nil {
				return nil, cleanup, err
			}
			files = append(files, path)
		}
	}
	return files, cleanup, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
