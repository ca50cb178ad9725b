package vsphere

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/resolver"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

// Path is where the webhook is served, as TKG's tkr-vsphere-resolver serves it.
const Path = "/resolve-template"

// VariableVCenter is the ClusterClass variable that names the cluster's vCenter: its server,
// datacenter and tlsThumbprint are read.
const VariableVCenter = "vcenter"

// osImageRef keys.
const (
	refVersion  = "version"
	refTemplate = "template"
	refMOID     = "moid"
)

// TemplateResolver resolves the VM templates of a topology Cluster's OVA OSImages.
type TemplateResolver struct {
	Client client.Reader
	// ListVMs lists the node images of a vCenter; nil means ListVMs.
	ListVMs func(context.Context, vcenter.Endpoint) ([]vcenter.VM, error)
}

var _ admission.Defaulter[*clusterv1.Cluster] = &TemplateResolver{}

// SetupWebhookWithManager serves the resolver at Path.
func (r *TemplateResolver) SetupWebhookWithManager(mgr ctrl.Manager) error {
	mgr.GetWebhookServer().Register(Path, admission.WithDefaulter[*clusterv1.Cluster](mgr.GetScheme(), r))
	return nil
}

// query is what one part of a cluster asks vCenter for.
type query struct {
	ovaVersion string
	os         vcenter.OS
}

// part is the TKR_DATA of the control plane or of one machine deployment.
type part struct {
	name string
	vars *[]clusterv1.ClusterVariable
	data map[string]*resolver.TKRData
	q    *query
}

// Default writes the template path and MOID of each part's OVA into its TKR_DATA, or refuses the
// Cluster when vCenter has no template for it. Clusters that are not resolved yet (no TKR label,
// or TKR_DATA not of that release), parts whose image is not an OVA, and parts whose template is
// already set are left as they are.
func (r *TemplateResolver) Default(ctx context.Context, cluster *clusterv1.Cluster) error {
	topology := &cluster.Spec.Topology
	tkrName := cluster.Labels[runv1alpha3.LabelTKR]
	if !topology.IsDefined() || tkrName == "" {
		return nil
	}
	cp, err := readPart("control plane", &topology.Variables)
	if err != nil || cp == nil {
		return err
	}
	if d := cp.data[topology.Version]; d == nil || d.Labels[runv1alpha3.LabelTKR] != tkrName {
		// The TKR resolver has not resolved this version yet.
		return nil
	}
	parts := []*part{cp}
	for i := range topology.Workers.MachineDeployments {
		md := &topology.Workers.MachineDeployments[i]
		p, err := readPart("machine deployment "+md.Name, &md.Variables.Overrides)
		if err != nil {
			return err
		}
		if p != nil {
			parts = append(parts, p)
		}
	}
	queries := map[query]bool{}
	for _, p := range parts {
		if p.q, err = queryOf(p, topology.Version); err != nil {
			return err
		}
		if p.q != nil {
			queries[*p.q] = true
		}
	}
	if len(queries) == 0 {
		return nil
	}
	ep, err := r.endpoint(ctx, cluster)
	if err != nil {
		return err
	}
	list := r.ListVMs
	if list == nil {
		list = vcenter.ListVMs
	}
	vms, err := list(ctx, ep)
	if err != nil {
		return err
	}
	found, err := match(vms, queries, ep)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if p.q == nil {
			continue
		}
		vm := found[*p.q]
		ref := p.data[topology.Version].OSImageRef
		ref[refTemplate], ref[refMOID] = vm.Path, vm.MOID
		if err := writePart(p); err != nil {
			return err
		}
	}
	ctrl.LoggerFrom(ctx).Info("VM templates resolved", "Cluster", klog.KObj(cluster), "templates", len(queries))
	return nil
}

func readPart(name string, vars *[]clusterv1.ClusterVariable) (*part, error) {
	value, ok := resolver.Variable(*vars, resolver.VariableTKRData)
	if !ok {
		return nil, nil
	}
	data := map[string]*resolver.TKRData{}
	if err := json.Unmarshal(value.Raw, &data); err != nil {
		return nil, fmt.Errorf("%s: variable %s is not a map of Kubernetes versions to release data: %w", name, resolver.VariableTKRData, err)
	}
	return &part{name: name, vars: vars, data: data}, nil
}

func writePart(p *part) error {
	raw, err := json.Marshal(p.data)
	if err != nil {
		return err
	}
	resolver.SetVariable(p.vars, resolver.VariableTKRData, apiextensionsv1.JSON{Raw: raw})
	return nil
}

// queryOf is what a part asks for: nil when its image is not an OVA or has its template already.
func queryOf(p *part, version string) (*query, error) {
	d := p.data[version]
	if d == nil {
		return nil, fmt.Errorf("%s: %s has no entry for the cluster's version %s", p.name, resolver.VariableTKRData, version)
	}
	if d.Labels["image-type"] != "ova" {
		return nil, nil
	}
	if t, _ := d.OSImageRef[refTemplate].(string); t != "" {
		// Resolved before: to resolve again, remove template and moid from osImageRef.
		return nil, nil
	}
	v, _ := d.OSImageRef[refVersion].(string)
	if v == "" {
		return nil, fmt.Errorf("%s: the OSImage %s names no OVA version (osImageRef.version)", p.name, d.Labels[runv1alpha3.LabelOSImage])
	}
	return &query{ovaVersion: v, os: vcenter.OS{Name: d.Labels["os-name"], Version: d.Labels["os-version"], Arch: d.Labels["os-arch"]}}, nil
}

// endpoint reads the cluster's vcenter variable and its credentials, the Secret named after the
// cluster in its namespace.
func (r *TemplateResolver) endpoint(ctx context.Context, cluster *clusterv1.Cluster) (vcenter.Endpoint, error) {
	var vc struct {
		Server        string `json:"server"`
		DataCenter    string `json:"datacenter"`
		TLSThumbprint string `json:"tlsThumbprint"`
	}
	if value, ok := resolver.Variable(cluster.Spec.Topology.Variables, VariableVCenter); ok {
		if err := json.Unmarshal(value.Raw, &vc); err != nil {
			return vcenter.Endpoint{}, fmt.Errorf("variable %s is not an object with server, datacenter and tlsThumbprint: %w", VariableVCenter, err)
		}
	}
	if vc.Server == "" || vc.DataCenter == "" {
		return vcenter.Endpoint{}, fmt.Errorf("to find the VM template of its OVA, the cluster needs variable %s with server and datacenter (VSPHERE_SERVER, VSPHERE_DATACENTER)", VariableVCenter)
	}
	secret := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: cluster.Name}, secret); err != nil {
		return vcenter.Endpoint{}, fmt.Errorf("vCenter credentials of cluster %s: Secret %s: %w (it needs keys username and password)", cluster.Name, klog.KObj(cluster), err)
	}
	return vcenter.Endpoint{Server: vc.Server, Datacenter: vc.DataCenter, Thumbprint: vc.TLSThumbprint,
		Username: string(secret.Data["username"]), Password: string(secret.Data["password"])}, nil
}

// match finds a template for every query, or says for each query without one what it looked for
// and which VMs would do once converted to templates.
func match(vms []vcenter.VM, queries map[query]bool, ep vcenter.Endpoint) (map[query]vcenter.VM, error) {
	found := map[query]vcenter.VM{}
	notTemplates := map[query][]string{}
	for _, vm := range vms {
		q := query{ovaVersion: vm.OVAVersion, os: vm.Distro}
		if !queries[q] {
			continue
		}
		if !vm.IsTemplate {
			notTemplates[q] = append(notTemplates[q], vm.Path)
			continue
		}
		if _, ok := found[q]; !ok {
			found[q] = vm
		}
	}
	var missing []string
	for q := range queries {
		if _, ok := found[q]; ok {
			continue
		}
		os := fmt.Sprintf("%s %s %s", q.os.Name, q.os.Version, q.os.Arch)
		if vms := notTemplates[q]; len(vms) > 0 {
			missing = append(missing, fmt.Sprintf("unable to find VM Template associated with OVA Version %s (%s) in datacenter %s, but found these VM(s) [%s] that can be used once converted to a VM Template",
				q.ovaVersion, os, ep.Datacenter, strings.Join(vms, ",")))
			continue
		}
		missing = append(missing, fmt.Sprintf("unable to find VM Template associated with OVA Version %s (%s) in datacenter %s. Please upload at least one VM Template to continue",
			q.ovaVersion, os, ep.Datacenter))
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("%s", strings.Join(missing, "; "))
	}
	return found, nil
}
