// Command render writes cert-manager's release manifest (cert-manager.yaml) as upstream's release
// makes it (make/manifests.mk): the chart of the module's deploy/charts with the CRDs of
// deploy/crds templated in, rendered by Helm's engine as `helm template --namespace=cert-manager
// --set installCRDs=true --set creator=static --set startupapicheck.enabled=false cert-manager`,
// after the namespace. It runs in this module, whose cert-manager version it renders.
package main

import (
	"bytes"
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
	listed, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", module).Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m %s: %w", module, err)
	}
	dir, version, ok := strings.Cut(strings.TrimSpace(string(listed)), " ")
	if !ok || dir == "" {
		return nil, fmt.Errorf("go list -m %s: no directory in %q", module, listed)
	}
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
