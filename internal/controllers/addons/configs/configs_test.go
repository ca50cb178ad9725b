package configs_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cniv1alpha1 "github.com/slipway-dev/slipway/api/cni/v1alpha1"
	cpiv1alpha1 "github.com/slipway-dev/slipway/api/cpi/v1alpha1"
	csiv1alpha1 "github.com/slipway-dev/slipway/api/csi/v1alpha1"
	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/addons"
	"github.com/slipway-dev/slipway/internal/controllers/addons/configs"
	"github.com/slipway-dev/slipway/internal/test/envtest"
	"github.com/slipway-dev/slipway/internal/tkg"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) {
		env = e
		e.StartManager(configs.SetupAll)
	}))
}

func TestNetworkValues(t *testing.T) {
	for _, tc := range []struct {
		pods, services []string
		family, dns    string
	}{
		{[]string{"100.96.0.0/11"}, []string{"100.64.0.0/13"}, "ipv4", "100.64.0.10"},
		{[]string{"fd00:100:96::/48"}, []string{"fd00:100:64::/108"}, "ipv6", "fd00:100:64::a"},
		{[]string{"192.168.0.0/16", "fd00:100:96::/48"}, []string{"192.168.0.0/16", "fd00:100:96::/48"}, "ipv4,ipv6", "192.168.0.10"},
		{[]string{"fd00:100:96::/48", "192.168.0.0/16"}, nil, "ipv6,ipv4", ""},
	} {
		c := &clusterv1.Cluster{}
		c.Spec.ClusterNetwork.Pods.CIDRBlocks, c.Spec.ClusterNetwork.Services.CIDRBlocks = tc.pods, tc.services
		dns, err := configs.CoreDNSIP(c)
		if got := configs.IPFamily(c); got != tc.family || dns != tc.dns || err != nil {
			t.Errorf("%v %v: family %q dns %q (%v), want %q %q", tc.pods, tc.services, got, dns, err, tc.family, tc.dns)
		}
	}
}

// TestConfigValues makes a vSphere cluster's configs and checks the values Secrets they give.
func TestConfigValues(t *testing.T) {
	ctx := t.Context()
	const ns = "configs"
	owner := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{tkg.LabelClusterName: "vs"}}
	}
	vsphereCluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "VSphereCluster",
		"metadata": map[string]any{"namespace": ns, "name": "vs"},
		"spec": map[string]any{"server": "vcenter.example.com", "thumbprint": "AA:BB",
			"identityRef": map[string]any{"kind": "Secret", "name": "vs-credentials"}}}}
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vs"}}
	cluster.Spec.ClusterNetwork.Pods.CIDRBlocks = []string{"100.96.0.0/11"}
	cluster.Spec.ClusterNetwork.Services.CIDRBlocks = []string{"100.64.0.0/13"}
	cluster.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "VSphereCluster", Name: "vs"}
	// The custom image repository's trust, as the configuration writes it into the topology.
	cluster.Spec.Topology = clusterv1.Topology{ClassRef: clusterv1.ClusterClassRef{Name: "tkg-vsphere-default-v1.0.0"}, Version: "v1.35.4",
		Variables: []clusterv1.ClusterVariable{
			{Name: "trust", Value: apiextensionsv1.JSON{Raw: []byte(`{"additionalTrustedCAs":[{"name":"imageRepository","data":"` +
				base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")) + `"}]}`)}},
			{Name: "imageRepository", Value: apiextensionsv1.JSON{Raw: []byte(`{"host":"registry.example.com/tkg","tlsCertificateValidation":{"enabled":false}}`)}},
		}}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, cluster, vsphereCluster,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vs-credentials"}, StringData: map[string]string{"username": "admin", "password": "s3cret"}},
		// A self-managed management cluster's copy of its values, written as Opaque on it from
		// the bootstrap cluster before the move, is the Secret the config writes after it.
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vs-calico-data-values"}, Type: corev1.SecretTypeOpaque,
			StringData: map[string]string{addons.ValuesKey: "copied: from the bootstrap cluster"}},
		&cniv1alpha1.CalicoConfig{ObjectMeta: owner("vs-calico-package"), Spec: cniv1alpha1.CalicoConfigSpec{Calico: cniv1alpha1.Calico{Config: cniv1alpha1.CalicoConfigDataValue{VethMTU: 1440}}}},
		&cpiv1alpha1.VSphereCPIConfig{ObjectMeta: owner("vs-vsphere-cpi-package")},
		&csiv1alpha1.VSphereCSIConfig{ObjectMeta: owner("vs-vsphere-csi-package"), Spec: csiv1alpha1.VSphereCSIConfigSpec{VSphereCSI: csiv1alpha1.VSphereCSI{Mode: csiv1alpha1.ModeVSphereCSI}}},
		&runv1alpha3.KappControllerConfig{ObjectMeta: owner("vs-kapp-controller-package")},
		&cniv1alpha1.AntreaConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "template",
			Labels: map[string]string{tkg.LabelClusterName: "vs"}, Annotations: map[string]string{tkg.AnnotationTemplateConfig: "true"}}},
	} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for secret, want := range map[string][]string{
		"vs-calico-data-values":          {"clusterCIDR: 100.96.0.0/11", "vethMTU: 1440", "ipFamily: ipv4", "infraProvider: vsphere"},
		"vs-vsphere-cpi-data-values":     {"mode: vsphereCPI", "vCenterAPIEndpoint: vcenter.example.com", "tlsThumbprint: AA:BB", "username: admin", "password: s3cret"},
		"vs-vsphere-csi-data-values":     {"mode: vsphereCSI", "server: vcenter.example.com", "username: admin", "clusterName: vs-"},
		"vs-kapp-controller-data-values": {"coreDNSIP: 100.64.0.10", "dangerousSkipTLSVerify: registry.example.com\n", "-----BEGIN CERTIFICATE-----"},
	} {
		envtest.Eventually(t, 20*time.Second, secret, func() error {
			s := &corev1.Secret{}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: secret}, s); err != nil {
				return err
			}
			for _, w := range want {
				if !strings.Contains(string(s.Data[addons.ValuesKey]), w) {
					return fmt.Errorf("values %q lack %q", s.Data[addons.ValuesKey], w)
				}
			}
			return nil
		})
	}
	// Each config says where its values went.
	envtest.ExpectEvent(t, env.Client, ns, "vs-vsphere-cpi-package", corev1.EventTypeNormal, configs.ReasonValuesWritten,
		func(note string) bool {
			return note == "Wrote the vsphere-cpi values into Secret vs-vsphere-cpi-data-values"
		})
	calico := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "vs-calico-data-values"}, calico); err != nil {
		t.Fatal(err)
	}
	if calico.Type != corev1.SecretTypeOpaque || calico.Labels[tkg.LabelClusterName] != "vs" || calico.Labels[tkg.LabelPackageName] != "calico" {
		t.Errorf("the Opaque values Secret the CalicoConfig took over: type %s, labels %v; want Opaque, labelled", calico.Type, calico.Labels)
	}
	cpi := &cpiv1alpha1.VSphereCPIConfig{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "vs-vsphere-cpi-package"}, cpi); err != nil || cpi.Status.SecretRef != "vs-vsphere-cpi-data-values" {
		t.Errorf("VSphereCPIConfig status.secretRef %q (%v)", cpi.Status.SecretRef, err)
	}
	// Converged, the values and the configs' status are written no more.
	envtest.ExpectStill(t, 3*time.Second, envtest.On(env.Client,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vs-calico-data-values"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vs-vsphere-cpi-data-values"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vs-vsphere-csi-data-values"}},
		&cpiv1alpha1.VSphereCPIConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vs-vsphere-cpi-package"}},
		&cniv1alpha1.CalicoConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vs-calico-package"}}))
	// Rotated credentials (`credentials update`) reach the CPI's and CSI's values.
	identity := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "vs-credentials"}, identity); err != nil {
		t.Fatal(err)
	}
	identity.Data["password"] = []byte("r0tated")
	if err := env.Client.Update(ctx, identity); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"vs-vsphere-cpi-data-values", "vs-vsphere-csi-data-values"} {
		envtest.Eventually(t, 20*time.Second, secret+" after the rotation", func() error {
			s := &corev1.Secret{}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: secret}, s); err != nil {
				return err
			}
			if !strings.Contains(string(s.Data[addons.ValuesKey]), "password: r0tated") {
				return fmt.Errorf("values %q lack the new password", s.Data[addons.ValuesKey])
			}
			return nil
		})
	}
	// A config whose values cannot be computed says why, on itself.
	broken := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nocreds"}}
	broken.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "VSphereCluster", Name: "nocreds"}
	for _, o := range []client.Object{broken, &cpiv1alpha1.VSphereCPIConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nocreds-vsphere-cpi-package",
		Labels: map[string]string{tkg.LabelClusterName: "nocreds"}}}} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	note := envtest.ExpectEvent(t, env.Client, ns, "nocreds-vsphere-cpi-package", corev1.EventTypeWarning, configs.ReasonValuesFailed, nil)
	if !strings.Contains(note, "Failed to compute the vsphere-cpi values: ") || !strings.Contains(note, "nocreds") {
		t.Errorf("the Warning of a config without its VSphereCluster says %q", note)
	}
	// An AntreaConfig of another cluster, created after the template, gets its values: the
	// AntreaConfig controller has looked at the template too, and must leave it without values.
	other := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "an"}}
	other.Spec.ClusterNetwork.Pods.CIDRBlocks = []string{"100.96.0.0/11"}
	other.Spec.ClusterNetwork.Services.CIDRBlocks = []string{"100.64.0.0/13"}
	for _, o := range []client.Object{other, &cniv1alpha1.AntreaConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "an-antrea-package",
		Labels: map[string]string{tkg.LabelClusterName: "an"}}}} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	envtest.Eventually(t, 20*time.Second, "an-antrea-data-values", func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "an-antrea-data-values"}, &corev1.Secret{})
	})
	envtest.Consistently(t, 2*time.Second, "the template-config AntreaConfig", func() error {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "vs-antrea-data-values"}, &corev1.Secret{}); err == nil {
			return fmt.Errorf("a template-config AntreaConfig was turned into values")
		}
		return nil
	})
}
