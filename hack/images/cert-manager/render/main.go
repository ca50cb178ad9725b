// Command render writes cert-manager's release manifest (cert-manager.yaml) with the objects
// upstream's release puts in it (make/manifests.mk): the chart of the module's deploy/charts with
// the CRDs of deploy/crds templated in, rendered by Helm's engine as `helm template
// --namespace=cert-manager --set installCRDs=true --set creator=static --set
// startupapicheck.enabled=false cert-manager`, after the namespace and in Helm's install order
// (upstream's file puts the CRDs before the rest). It runs in this module, whose cert-manager
// version it renders.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/yaml"
)

const module = "github.com/cert-manager/cert-manager"

func main() {
	out := flag.String("o", "", "the file to write the manifest to")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "render: -o FILE is required")
		os.Exit(2)
	}
	data, err := render()
	if err == nil {
		err = os.WriteFile(*out, data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}

// render renders the release manifest of the module's version.
func render() ([]byte, error) {
	// go mod download finds the module in the cache, or fetches it, at this module's version.
	downloaded, err := exec.Command("go", "mod", "download", "-json", module).Output()
	if err != nil {
		return nil, fmt.Errorf("go mod download %s (run in hack/images/cert-manager, with the Go module proxy reachable): %w", module, err)
	}
	var m struct{ Dir, Version, Error string }
	if err := json.Unmarshal(downloaded, &m); err != nil {
		return nil, fmt.Errorf("go mod download %s: %w", module, err)
	}
	if m.Dir == "" {
		return nil, fmt.Errorf("go mod download %s gave no directory: %s", module, m.Error)
	}
	dir, version := m.Dir, m.Version
	c, err := loadChart(dir, version)
	if err != nil {
		return nil, err
	}
	set := map[string]any{"installCRDs": true, "creator": "static", "startupapicheck": map[string]any{"enabled": false}}
	values, err := chartutil.ToRenderValues(c, set, chartutil.ReleaseOptions{Name: "cert-manager", Namespace: "cert-manager", Revision: 1, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(c, values)
	if err != nil {
		return nil, fmt.Errorf("rendering cert-manager's chart: %w", err)
	}
	// NOTES.txt is for a terminal, not the cluster.
	for name := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(files, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, err
	}
	if len(hooks) > 0 {
		return nil, fmt.Errorf("cert-manager's chart rendered %d hooks (startupapicheck is off): the static manifest has none", len(hooks))
	}
	namespace, err := os.ReadFile(filepath.Join(dir, "deploy", "manifests", "namespace.yaml"))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# cert-manager %s: upstream's chart rendered as its release's static manifest.\n", version)
	b.Write(namespace)
	for _, m := range manifests {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Name, strings.TrimSpace(m.Content))
	}
	return b.Bytes(), nil
}

// loadChart reads the chart as the release tool assembles it: Chart.yaml from Chart.template.yaml
// with the version, and templates/crds.yaml made of deploy/crds, behind installCRDs.
func loadChart(dir, version string) (*chart.Chart, error) {
	chartDir := filepath.Join(dir, "deploy", "charts", "cert-manager")
	data, err := os.ReadFile(filepath.Join(chartDir, "Chart.template.yaml"))
	if err != nil {
		return nil, err
	}
	meta := &chart.Metadata{}
	if err := yaml.Unmarshal(data, meta); err != nil {
		return nil, fmt.Errorf("Chart.template.yaml: %w", err)
	}
	meta.Version, meta.AppVersion = version, version
	values, err := chartutil.ReadValuesFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		return nil, err
	}
	c := &chart.Chart{Metadata: meta, Values: values}
	templates, err := filepath.Glob(filepath.Join(chartDir, "templates", "*"))
	if err != nil {
		return nil, err
	}
	for _, path := range templates {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		c.Templates = append(c.Templates, &chart.File{Name: "templates/" + filepath.Base(path), Data: data})
	}
	crds, err := filepath.Glob(filepath.Join(dir, "deploy", "crds", "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(crds)
	crdTemplate := []byte("{{- if .Values.installCRDs }}\n")
	for _, path := range crds {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		crdTemplate = append(append(append(crdTemplate, "---\n"...), bytes.TrimPrefix(data, []byte("---\n"))...), '\n')
	}
	crdTemplate = append(crdTemplate, "{{- end }}\n"...)
	c.Templates = append(c.Templates, &chart.File{Name: "templates/crds.yaml", Data: crdTemplate})
	return c, c.Validate()
}
