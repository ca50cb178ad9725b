package capabilities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	runv1alpha1 "github.com/slipway-dev/slipway/api/run/v1alpha1"
)

// querier answers questions as one identity.
type querier struct {
	discovery discovery.DiscoveryInterface
	client    client.Client
	// definitions is the OpenAPI v2 document's definitions, read on the first schema question.
	definitions map[string]any
}

func newQuerier(cfg *rest.Config) (*querier, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, err
	}
	return &querier{discovery: dc, client: c}, nil
}

// evaluate answers every query.
func (q *querier) evaluate(ctx context.Context, queries []runv1alpha1.Query) []runv1alpha1.Result {
	results := make([]runv1alpha1.Result, 0, len(queries))
	for _, query := range queries {
		result := runv1alpha1.Result{Name: query.Name}
		for _, g := range query.GroupVersionResources {
			result.GroupVersionResources = append(result.GroupVersionResources, answer(g.Name, q.gvr(g)))
		}
		for _, o := range query.Objects {
			result.Objects = append(result.Objects, answer(o.Name, q.object(ctx, o)))
		}
		for _, s := range query.PartialSchemas {
			result.PartialSchemas = append(result.PartialSchemas, answer(s.Name, q.partialSchema(ctx, s)))
		}
		results = append(results, result)
	}
	return results
}

// notFound is an answer of no, with what was missing.
type notFound string

func (n notFound) Error() string { return string(n) }

// answer turns what a question returned into its result: nil is found, notFound is not found
// with the reason, anything else could not be answered.
func answer(name string, err error) runv1alpha1.QueryResult {
	r := runv1alpha1.QueryResult{Name: name, Found: err == nil}
	var nf notFound
	switch {
	case err == nil:
	case errors.As(err, &nf):
		r.NotFoundReason = string(nf)
	default:
		r.Error, r.ErrorDetail = true, err.Error()
	}
	return r
}

// gvr answers whether a group is served, in every listed version, with the resource.
func (q *querier) gvr(g runv1alpha1.QueryGVR) error {
	group := g.Group
	if group == "core" {
		group = ""
	}
	if g.Resource != "" && len(g.Versions) == 0 {
		return fmt.Errorf("resource %q needs at least one version in versions", g.Resource)
	}
	groups, err := q.discovery.ServerGroups()
	if err != nil {
		return err
	}
	i := slices.IndexFunc(groups.Groups, func(a metav1.APIGroup) bool { return a.Name == group })
	if i < 0 {
		return notFound(fmt.Sprintf("API group %q is not served", g.Group))
	}
	served := map[string]bool{}
	for _, v := range groups.Groups[i].Versions {
		served[v.Version] = true
	}
	for _, v := range g.Versions {
		if !served[v] {
			return notFound(fmt.Sprintf("version %s of API group %q is not served", v, g.Group))
		}
		if g.Resource == "" {
			continue
		}
		resources, err := q.discovery.ServerResourcesForGroupVersion(schema.GroupVersion{Group: group, Version: v}.String())
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == g.Resource }) {
			return notFound(fmt.Sprintf("resource %s is not served in version %s of API group %q", g.Resource, v, g.Group))
		}
	}
	return nil
}

// object answers whether an object exists with and without the listed annotations.
func (q *querier) object(ctx context.Context, o runv1alpha1.QueryObject) error {
	ref := o.ObjectReference
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(ref.APIVersion)
	u.SetKind(ref.Kind)
	what := fmt.Sprintf("%s %s", ref.Kind, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name})
	if err := q.client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u); apierrors.IsNotFound(err) {
		return notFound(what + " does not exist")
	} else if err != nil {
		return err
	}
	annotations := u.GetAnnotations()
	for k, v := range o.WithAnnotations {
		if got, ok := annotations[k]; !ok || got != v {
			return notFound(fmt.Sprintf("%s has no annotation %s=%s", what, k, v))
		}
	}
	for k := range o.WithoutAnnotations {
		if _, ok := annotations[k]; ok {
			return notFound(fmt.Sprintf("%s has annotation %s", what, k))
		}
	}
	return nil
}

// partialSchema answers whether a definition of the cluster's OpenAPI v2 document contains the
// fragment.
func (q *querier) partialSchema(ctx context.Context, s runv1alpha1.QueryPartialSchema) error {
	var fragment any
	if err := yaml.Unmarshal([]byte(s.PartialSchema), &fragment); err != nil {
		return fmt.Errorf("partialSchema is not YAML or JSON: %w", err)
	}
	if q.definitions == nil {
		raw, err := q.discovery.RESTClient().Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/json").Do(ctx).Raw()
		if err != nil {
			return fmt.Errorf("failed to read the OpenAPI v2 document: %w", err)
		}
		var doc struct {
			Definitions map[string]any `json:"definitions"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return fmt.Errorf("the OpenAPI v2 document is not JSON: %w", err)
		}
		q.definitions = doc.Definitions
	}
	for _, definition := range q.definitions {
		if contains(definition, fragment) {
			return nil
		}
	}
	return notFound("no definition of the cluster's OpenAPI schema contains the fragment")
}

// contains reports whether have has everything want has: every key of a map, recursively; an
// element containing each element of a list; equal values otherwise.
func contains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if !contains(h[k], v) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok {
			return false
		}
		for _, v := range w {
			if !slices.ContainsFunc(h, func(e any) bool { return contains(e, v) }) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(have, want)
}
