package configs

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cniv1alpha1 "github.com/slipway-dev/slipway/api/cni/v1alpha1"
	cpiv1alpha1 "github.com/slipway-dev/slipway/api/cpi/v1alpha1"
	csiv1alpha1 "github.com/slipway-dev/slipway/api/csi/v1alpha1"
	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
)

// SetupAll registers the controllers of the five *Config kinds.
func SetupAll(mgr ctrl.Manager) error {
	c := mgr.GetClient()
	for _, setup := range []func(ctrl.Manager) error{
		(&Config[*runv1alpha3.KappControllerConfig]{Client: c, Package: "kapp-controller",
			New: func() *runv1alpha3.KappControllerConfig { return &runv1alpha3.KappControllerConfig{} }, Values: kappValues,
			SecretRef:    func(o *runv1alpha3.KappControllerConfig) string { return o.Status.SecretRef },
			SetSecretRef: func(o *runv1alpha3.KappControllerConfig, s string) { o.Status.SecretRef = s }}).SetupWithManager,
		(&Config[*cniv1alpha1.AntreaConfig]{Client: c, Package: "antrea",
			New: func() *cniv1alpha1.AntreaConfig { return &cniv1alpha1.AntreaConfig{} }, Values: antreaValues,
			SecretRef:    func(o *cniv1alpha1.AntreaConfig) string { return o.Status.SecretRef },
			SetSecretRef: func(o *cniv1alpha1.AntreaConfig, s string) { o.Status.SecretRef = s }}).SetupWithManager,
		(&Config[*cniv1alpha1.CalicoConfig]{Client: c, Package: "calico",
			New: func() *cniv1alpha1.CalicoConfig { return &cniv1alpha1.CalicoConfig{} }, Values: calicoValues,
			SecretRef:    func(o *cniv1alpha1.CalicoConfig) string { return o.Status.SecretRef },
			SetSecretRef: func(o *cniv1alpha1.CalicoConfig, s string) { o.Status.SecretRef = s }}).SetupWithManager,
		(&Config[*cpiv1alpha1.VSphereCPIConfig]{Client: c, Package: "vsphere-cpi",
			New: func() *cpiv1alpha1.VSphereCPIConfig { return &cpiv1alpha1.VSphereCPIConfig{} }, Values: cpiValues,
			SecretRef:    func(o *cpiv1alpha1.VSphereCPIConfig) string { return o.Status.SecretRef },
			SetSecretRef: func(o *cpiv1alpha1.VSphereCPIConfig, s string) { o.Status.SecretRef = s }}).SetupWithManager,
		(&Config[*csiv1alpha1.VSphereCSIConfig]{Client: c, Package: "vsphere-csi",
			New: func() *csiv1alpha1.VSphereCSIConfig { return &csiv1alpha1.VSphereCSIConfig{} }, Values: csiValues,
			SecretRef: func(o *csiv1alpha1.VSphereCSIConfig) string {
				if o.Status.SecretRef == nil {
					return ""
				}
				return *o.Status.SecretRef
			},
			SetSecretRef: func(o *csiv1alpha1.VSphereCSIConfig, s string) { o.Status.SecretRef = &s }}).SetupWithManager,
	} {
		if err := setup(mgr); err != nil {
			return err
		}
	}
	return nil
}

// toMap turns a typed spec part into values.
func toMap(v any) map[string]any {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
	if err != nil || m == nil {
		return map[string]any{}
	}
	return m
}

// IPFamily is the cluster's IP family from its pod and service CIDRs: ipv4, ipv6, or the dual
// stacks ipv4,ipv6 and ipv6,ipv4 (the first CIDR's family first).
func IPFamily(cluster *clusterv1.Cluster) string {
	var families []string
	seen := map[string]bool{}
	for _, cidr := range append(append([]string{}, cluster.Spec.ClusterNetwork.Pods.CIDRBlocks...), cluster.Spec.ClusterNetwork.Services.CIDRBlocks...) {
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			continue
		}
		f := "ipv4"
		if p.Addr().Is6() {
			f = "ipv6"
		}
		if !seen[f] {
			seen[f] = true
			families = append(families, f)
		}
	}
	if len(families) == 0 {
		return "ipv4"
	}
	return strings.Join(families, ",")
}

// CoreDNSIP is the cluster DNS address kubeadm gives: the tenth address of the first service CIDR.
func CoreDNSIP(cluster *clusterv1.Cluster) (string, error) {
	blocks := cluster.Spec.ClusterNetwork.Services.CIDRBlocks
	if len(blocks) == 0 {
		return "", nil
	}
	p, err := netip.ParsePrefix(blocks[0])
	if err != nil {
		return "", fmt.Errorf("cluster %s: spec.clusterNetwork.services.cidrBlocks[0] %q: %w", cluster.Name, blocks[0], err)
	}
	a := p.Masked().Addr()
	for range 10 {
		a = a.Next()
	}
	return a.String(), nil
}

// InfraProvider names the cluster's infrastructure as TKG's packages expect: vsphere for a
// VSphereCluster, local for a LocalCluster.
func InfraProvider(cluster *clusterv1.Cluster) string {
	kind := cluster.Spec.InfrastructureRef.Kind
	if kind == "" {
		return "vsphere"
	}
	return strings.ToLower(strings.TrimSuffix(kind, "Cluster"))
}

func cidrs(blocks []string, v6 bool) string {
	var out []string
	for _, b := range blocks {
		if p, err := netip.ParsePrefix(b); err == nil && p.Addr().Is6() == v6 {
			out = append(out, b)
		}
	}
	return strings.Join(out, ",")
}

func kappValues(_ context.Context, _ client.Client, cluster *clusterv1.Cluster, o *runv1alpha3.KappControllerConfig) (any, error) {
	v := toMap(&o.Spec)
	dns, err := CoreDNSIP(cluster)
	if err != nil {
		return nil, err
	}
	kc, _ := v["kappController"].(map[string]any)
	if kc == nil {
		kc = map[string]any{}
		v["kappController"] = kc
	}
	deployment, _ := kc["deployment"].(map[string]any)
	if deployment == nil {
		deployment = map[string]any{}
		kc["deployment"] = deployment
	}
	if dns != "" {
		deployment["coreDNSIP"] = dns
	}
	// kapp-controller trusts the custom image repository as the cluster's nodes do: the CA of
	// the ClusterClass's trust variable named imageRepository, and the imageRepository variable's
	// host unverified when its TLS validation is off. What the spec sets wins.
	config, _ := kc["config"].(map[string]any)
	if config == nil {
		config = map[string]any{}
		kc["config"] = config
	}
	caCerts, skip := registryTrust(cluster)
	if config["caCerts"] == nil && caCerts != "" {
		config["caCerts"] = caCerts
	}
	if config["dangerousSkipTLSVerify"] == nil && skip != "" {
		config["dangerousSkipTLSVerify"] = skip
	}
	return v, nil
}

// registryTrust reads the custom image repository's trust from a cluster's topology variables:
// the PEM of the trust variable's additionalTrustedCAs entry named imageRepository, and the
// registry of the imageRepository variable's host (TKG_CUSTOM_IMAGE_REPOSITORY) when
// tlsCertificateValidation is off.
func registryTrust(cluster *clusterv1.Cluster) (caCerts, skipVerify string) {
	for _, v := range cluster.Spec.Topology.Variables {
		switch v.Name {
		case "trust":
			var trust struct {
				AdditionalTrustedCAs []struct{ Name, Data string } `json:"additionalTrustedCAs"`
			}
			if json.Unmarshal(v.Value.Raw, &trust) == nil {
				for _, ca := range trust.AdditionalTrustedCAs {
					if pem, err := base64.StdEncoding.DecodeString(ca.Data); err == nil && ca.Name == "imageRepository" {
						caCerts = string(pem)
					}
				}
			}
		case "imageRepository":
			var repo struct {
				Host                     string `json:"host"`
				TLSCertificateValidation *struct {
					Enabled *bool `json:"enabled"`
				} `json:"tlsCertificateValidation"`
			}
			if json.Unmarshal(v.Value.Raw, &repo) == nil && repo.TLSCertificateValidation != nil &&
				repo.TLSCertificateValidation.Enabled != nil && !*repo.TLSCertificateValidation.Enabled {
				skipVerify, _, _ = strings.Cut(repo.Host, "/")
			}
		}
	}
	return caCerts, skipVerify
}

func antreaValues(_ context.Context, _ client.Client, cluster *clusterv1.Cluster, o *cniv1alpha1.AntreaConfig) (any, error) {
	config := toMap(&o.Spec.Antrea.AntreaConfigDataValue)
	services := cluster.Spec.ClusterNetwork.Services.CIDRBlocks
	config["serviceCIDR"] = cidrs(services, false)
	config["serviceCIDRv6"] = cidrs(services, true)
	return map[string]any{"infraProvider": InfraProvider(cluster), "antrea": map[string]any{"config": config}}, nil
}

func calicoValues(_ context.Context, _ client.Client, cluster *clusterv1.Cluster, o *cniv1alpha1.CalicoConfig) (any, error) {
	config := toMap(&o.Spec.Calico.Config)
	config["clusterCIDR"] = strings.Join(cluster.Spec.ClusterNetwork.Pods.CIDRBlocks, ",")
	return map[string]any{"infraProvider": InfraProvider(cluster), "ipFamily": IPFamily(cluster), "calico": map[string]any{"config": config}}, nil
}

// VSphereCluster is what a cluster's VSphereCluster says about its vCenter.
type VSphereCluster struct {
	Server, Thumbprint string
	// Identity is the Secret holding the credentials (username, password) in the cluster's
	// namespace: the identityRef's, or the one named after the cluster when it names none.
	Identity string
}

// VSphereClusterOf reads the VSphereCluster of a cluster on vSphere.
func VSphereClusterOf(ctx context.Context, c client.Client, cluster *clusterv1.Cluster) (VSphereCluster, error) {
	ref := cluster.Spec.InfrastructureRef
	mapping, err := c.RESTMapper().RESTMapping(schema.GroupKind{Group: ref.APIGroup, Kind: ref.Kind})
	if err != nil {
		return VSphereCluster{}, fmt.Errorf("cluster %s: VSphereCluster is not served: %w", cluster.Name, err)
	}
	vc := &unstructured.Unstructured{}
	vc.SetGroupVersionKind(mapping.GroupVersionKind)
	if err := c.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: ref.Name}, vc); err != nil {
		return VSphereCluster{}, fmt.Errorf("cluster %s: VSphereCluster %s: %w", cluster.Name, ref.Name, err)
	}
	out := VSphereCluster{}
	out.Server, _, _ = unstructured.NestedString(vc.Object, "spec", "server")
	out.Thumbprint, _, _ = unstructured.NestedString(vc.Object, "spec", "thumbprint")
	kind, _, _ := unstructured.NestedString(vc.Object, "spec", "identityRef", "kind")
	out.Identity, _, _ = unstructured.NestedString(vc.Object, "spec", "identityRef", "name")
	if kind == "" {
		kind, out.Identity = "Secret", cluster.Name
	}
	if kind != "Secret" {
		return out, fmt.Errorf("cluster %s: VSphereCluster %s: identityRef kind %s is not supported: use a Secret with username and password", cluster.Name, ref.Name, kind)
	}
	return out, nil
}

// vsphere is what the vSphere CPI and CSI need of a cluster's vCenter.
type vsphere struct {
	server, thumbprint, username, password string
}

// vsphereOf reads the cluster's VSphereCluster and the credentials its identity Secret holds. A
// cluster on other infrastructure gives nothing.
func vsphereOf(ctx context.Context, c client.Client, cluster *clusterv1.Cluster) (vsphere, error) {
	if cluster.Spec.InfrastructureRef.Kind != "VSphereCluster" {
		return vsphere{}, nil
	}
	vc, err := VSphereClusterOf(ctx, c, cluster)
	out := vsphere{server: vc.Server, thumbprint: vc.Thumbprint}
	if err != nil {
		return out, err
	}
	s := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: vc.Identity}, s); err != nil {
		return out, fmt.Errorf("cluster %s: vSphere credentials Secret %s: %w", cluster.Name, vc.Identity, err)
	}
	out.username, out.password = string(s.Data["username"]), string(s.Data["password"])
	return out, nil
}

func setIfEmpty(m map[string]any, key, value string) {
	if s, _ := m[key].(string); s == "" && value != "" {
		m[key] = value
	}
}

func cpiValues(ctx context.Context, c client.Client, cluster *clusterv1.Cluster, o *cpiv1alpha1.VSphereCPIConfig) (any, error) {
	cpi := toMap(&o.Spec.VSphereCPI)
	setIfEmpty(cpi, "mode", cpiv1alpha1.ModeVSphereCPI)
	if cpi["mode"] == cpiv1alpha1.ModeVSphereCPI {
		vs, err := vsphereOf(ctx, c, cluster)
		if err != nil {
			return nil, err
		}
		setIfEmpty(cpi, "vCenterAPIEndpoint", vs.server)
		setIfEmpty(cpi, "tlsThumbprint", vs.thumbprint)
		setIfEmpty(cpi, "username", vs.username)
		setIfEmpty(cpi, "password", vs.password)
		setIfEmpty(cpi, "ipFamily", IPFamily(cluster))
		delete(cpi, "vSphereCredentialLocalObjRef")
	}
	return map[string]any{"vsphereCPI": cpi}, nil
}

func csiValues(ctx context.Context, c client.Client, cluster *clusterv1.Cluster, o *csiv1alpha1.VSphereCSIConfig) (any, error) {
	csi := map[string]any{"mode": o.Spec.VSphereCSI.Mode}
	if o.Spec.VSphereCSI.NonParavirtualConfig != nil {
		csi = toMap(o.Spec.VSphereCSI.NonParavirtualConfig)
		csi["mode"] = o.Spec.VSphereCSI.Mode
	}
	setIfEmpty(csi, "mode", csiv1alpha1.ModeVSphereCSI)
	if csi["mode"] == csiv1alpha1.ModeVSphereCSI {
		vs, err := vsphereOf(ctx, c, cluster)
		if err != nil {
			return nil, err
		}
		setIfEmpty(csi, "namespace", "vmware-system-csi")
		setIfEmpty(csi, "clusterName", cluster.Name+"-"+string(cluster.UID))
		setIfEmpty(csi, "server", vs.server)
		setIfEmpty(csi, "tlsThumbprint", vs.thumbprint)
		setIfEmpty(csi, "username", vs.username)
		setIfEmpty(csi, "password", vs.password)
		delete(csi, "vSphereCredentialLocalObjRef")
	}
	return map[string]any{"vsphereCSI": csi}, nil
}
