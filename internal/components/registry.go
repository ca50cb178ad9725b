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
	// Run runs the component with the container's arguments until the context ends.
	Run func(ctx context.Context, args []string) error
}

// Registry is the set of known components.
type Registry struct {
	byName map[string]Component
}

// NewRegistry returns a registry of the given components.
func NewRegistry(components ...Component) *Registry {
	r := &Registry{byName: map[string]Component{}}
	for _, c := range components {
		r.byName[c.Name] = c
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
		tkrSourceController(),
		tkrStatusController(),
		tkrResolverWebhook(),
		tkrVSphereResolver(),
		tkrConversionWebhook(),
		capabilitiesManager(),
		localInfrastructureController(),
		localPodNetwork(),
		standIn(),
	)
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
