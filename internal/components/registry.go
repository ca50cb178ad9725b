package components

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Component is one in-cluster program slipway can run.
type Component struct {
	// Name is what `slipway component run` takes.
	Name string
	// Images are the image names (the last element of the repository path) whose pods run this
	// component, whatever registry and tag they come from.
	Images []string
	// Run runs the component with the container's arguments until the context ends.
	Run func(ctx context.Context, args []string) error
}

// Registry is the set of known components.
type Registry struct {
	byName  map[string]Component
	byImage map[string]string
}

// NewRegistry returns a registry of the given components.
func NewRegistry(components ...Component) *Registry {
	r := &Registry{byName: map[string]Component{}, byImage: map[string]string{}}
	for _, c := range components {
		r.byName[c.Name] = c
		for _, image := range c.Images {
			r.byImage[image] = c.Name
		}
	}
	return r
}

// Default returns the components built into slipway.
func Default() *Registry {
	return NewRegistry(
		addonsManager(),
		featureGatesManager(),
		objectPropagation(),
		tanzuAuthManager(),
		kappController(),
		tkrSourceController(),
		tkrStatusController(),
		tkrResolverWebhook(),
		tkrVSphereResolver(),
		tkrConversionWebhook(),
		capabilitiesManager(),
		clusterAPIController(),
		kubeadmBootstrapController(),
		kubeadmControlPlaneController(),
		localInfrastructureController(),
		capvController(),
		ipamInClusterController(),
		certManagerController(),
		certManagerCAInjector(),
		certManagerWebhook(),
	)
}

// ImageName returns the last element of an image reference's repository, without tag or digest:
// registry.k8s.io/cluster-api/cluster-api-controller:v1.13.4 gives cluster-api-controller.
func ImageName(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, "/"); i >= 0 {
		image = image[i+1:]
	}
	if i := strings.Index(image, ":"); i >= 0 {
		image = image[:i]
	}
	return image
}

// ComponentFor returns the name of the component an image runs, if any: what the node agent
// starts for a container.
func (r *Registry) ComponentFor(image string) (string, bool) {
	name, ok := r.byImage[ImageName(image)]
	return name, ok
}

// Get returns the component with the given name.
func (r *Registry) Get(name string) (Component, error) {
	c, ok := r.byName[name]
	if !ok {
		return Component{}, fmt.Errorf("unknown component %q: known components are %s", name, strings.Join(r.Names(), ", "))
	}
	return c, nil
}

// Names lists the known components.
func (r *Registry) Names() []string {
	var names []string
	for n := range r.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
