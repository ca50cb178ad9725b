package addons

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Packages lists a ClusterBootstrap spec's packages that are set: CNI, CPI, CSI, kapp, then the
// additional ones.
func Packages(spec *runv1alpha3.ClusterBootstrapTemplateSpec) []*runv1alpha3.ClusterBootstrapPackage {
	if spec == nil {
		return nil
	}
	var out []*runv1alpha3.ClusterBootstrapPackage
	for _, p := range append([]*runv1alpha3.ClusterBootstrapPackage{spec.CNI, spec.CPI, spec.CSI, spec.Kapp}, spec.AdditionalPackages...) {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

// CorePackages names the core package fields of a ClusterBootstrap spec, for messages.
var CorePackages = []string{"cni", "cpi", "csi", "kapp"}

// Core returns a spec's core package fields by name.
func Core(spec *runv1alpha3.ClusterBootstrapTemplateSpec) map[string]**runv1alpha3.ClusterBootstrapPackage {
	return map[string]**runv1alpha3.ClusterBootstrapPackage{"cni": &spec.CNI, "cpi": &spec.CPI, "csi": &spec.CSI, "kapp": &spec.Kapp}
}

// CompleteRefNames replaces every refName ending in '*' with the one bootstrap package of the
// release whose name starts with what precedes it: calico* becomes
// calico.tanzu.vmware.com.3.26.3---vmware.1-tkg.1. No match or several matches is an error.
func CompleteRefNames(tkr *runv1alpha3.TanzuKubernetesRelease, spec *runv1alpha3.ClusterBootstrapTemplateSpec) error {
	for _, p := range Packages(spec) {
		prefix, ok := strings.CutSuffix(p.RefName, "*")
		if !ok {
			continue
		}
		var matches []string
		for _, bp := range tkr.Spec.BootstrapPackages {
			if strings.HasPrefix(bp.Name, prefix) {
				matches = append(matches, bp.Name)
			}
		}
		switch len(matches) {
		case 1:
			p.RefName = matches[0]
		case 0:
			return fmt.Errorf("refName %q matches none of the bootstrap packages of TanzuKubernetesRelease %s: use one of %s",
				p.RefName, tkr.Name, bootstrapNames(tkr))
		default:
			return fmt.Errorf("refName %q matches %d bootstrap packages of TanzuKubernetesRelease %s (%s): make the prefix longer",
				p.RefName, len(matches), tkr.Name, strings.Join(matches, ", "))
		}
	}
	return nil
}

func bootstrapNames(tkr *runv1alpha3.TanzuKubernetesRelease) string {
	var names []string
	for _, bp := range tkr.Spec.BootstrapPackages {
		names = append(names, bp.Name)
	}
	return strings.Join(names, ", ")
}

// AddMissingFields fills what a ClusterBootstrap spec leaves out from a template: a core package
// that is not set is taken whole; a package without valuesFrom takes the valuesFrom of the
// template's package of the same short name; additional packages of the template that the spec
// does not list are appended. What the spec sets is kept.
func AddMissingFields(template, spec *runv1alpha3.ClusterBootstrapTemplateSpec) {
	if template == nil {
		return
	}
	core, templateCore := Core(spec), Core(template)
	for _, name := range CorePackages {
		p, t := core[name], *templateCore[name]
		switch {
		case t == nil:
		case *p == nil:
			*p = t.DeepCopy()
		case (*p).ValuesFrom == nil && tkg.ShortName((*p).RefName) == tkg.ShortName(t.RefName):
			(*p).ValuesFrom = t.ValuesFrom.DeepCopy()
		}
	}
	for _, t := range template.AdditionalPackages {
		found := false
		for _, p := range spec.AdditionalPackages {
			if tkg.ShortName(p.RefName) == tkg.ShortName(t.RefName) {
				found = true
				if p.ValuesFrom == nil {
					p.ValuesFrom = t.ValuesFrom.DeepCopy()
				}
			}
		}
		if !found {
			spec.AdditionalPackages = append(spec.AdditionalPackages, t.DeepCopy())
		}
	}
}

// LookupPackage finds the Package object a ClusterBootstrap package names, in the cluster's
// namespace or else in the system namespace (the packaging global namespace of the management
// cluster). It returns nil when neither has it.
func LookupPackage(ctx context.Context, c client.Reader, namespace, systemNamespace, name string) (*datapkgingv1alpha1.Package, error) {
	for _, ns := range []string{namespace, systemNamespace} {
		p := &datapkgingv1alpha1.Package{}
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p)
		if err == nil {
			return p, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return nil, nil
}

// configInfrastructure names, for the CPI and CSI configuration kinds of TKG's providers, the
// Cluster API infrastructure kind each configures.
var configInfrastructure = map[string]string{
	"VSphereCPIConfig":   "VSphereCluster",
	"VSphereCSIConfig":   "VSphereCluster",
	"OracleCPIConfig":    "OCICluster",
	"AwsEbsCSIConfig":    "AWSCluster",
	"AzureDiskCSIConfig": "AzureCluster",
	"AzureFileCSIConfig": "AzureCluster",
}

// DropForeignProviders removes from spec the cpi and csi packages whose values are the
// configuration of another infrastructure than the cluster's (InfrastructureKind: LocalCluster,
// VSphereCluster): a release's template serves every provider, and TKG's CLI writes a cluster's
// ClusterBootstrap with its own provider's CPI and CSI only. A cluster whose infrastructure is not
// known yet keeps them. It returns the refNames it dropped.
func DropForeignProviders(ctx context.Context, c client.Reader, cluster *clusterv1.Cluster, spec *runv1alpha3.ClusterBootstrapTemplateSpec) ([]string, error) {
	infra, err := InfrastructureKind(ctx, c, cluster)
	if err != nil || infra == "" {
		return nil, err
	}
	return DropForeign(spec, infra), nil
}

// DropForeign removes the cpi and csi packages of spec that configure another infrastructure
// than infraKind, and returns their refNames; with infraKind "" it removes those of every
// infrastructure.
func DropForeign(spec *runv1alpha3.ClusterBootstrapTemplateSpec, infraKind string) []string {
	if spec == nil {
		return nil
	}
	var dropped []string
	for _, p := range []**runv1alpha3.ClusterBootstrapPackage{&spec.CPI, &spec.CSI} {
		if *p == nil || (*p).ValuesFrom == nil || (*p).ValuesFrom.ProviderRef == nil {
			continue
		}
		if want, known := configInfrastructure[(*p).ValuesFrom.ProviderRef.Kind]; known && want != infraKind {
			dropped = append(dropped, (*p).RefName)
			*p = nil
		}
	}
	return dropped
}

// InfrastructureKind is the kind of a Cluster's infrastructure: its infrastructureRef's, or, for
// a ClusterClass cluster that the topology controller has not reconciled yet, its class's
// infrastructure template's without "Template". It is "" when neither is known yet.
func InfrastructureKind(ctx context.Context, c client.Reader, cluster *clusterv1.Cluster) (string, error) {
	if kind := cluster.Spec.InfrastructureRef.Kind; kind != "" {
		return kind, nil
	}
	if cluster.Spec.Topology.ClassRef.Name == "" {
		return "", nil
	}
	cc := &clusterv1.ClusterClass{}
	ns := cluster.Spec.Topology.ClassRef.Namespace
	if ns == "" {
		ns = cluster.Namespace
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster.Spec.Topology.ClassRef.Name}, cc); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	return strings.TrimSuffix(cc.Spec.Infrastructure.TemplateRef.Kind, "Template"), nil
}

// DropUnmanagedCNI takes the CNI out of a template when the ClusterBootstrap it completes says
// its CNI is the user's, so that none is added.
func DropUnmanagedCNI(cb *runv1alpha3.ClusterBootstrap, template *runv1alpha3.ClusterBootstrapTemplateSpec) {
	if _, ok := cb.Annotations[runv1alpha3.AnnotationUnmanagedCNI]; ok && template != nil {
		template.CNI = nil
	}
}
