package resolver_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/resolver"
	"github.com/slipway-dev/slipway/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) { env = e }))
}

// catalogue creates two releases on the API server: v1.35 with ubuntu and photon images, v1.34
// with ubuntu, and an incompatible v1.36.
func catalogue(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	image := func(name, k8s, os string) *runv1alpha3.OSImage {
		return &runv1alpha3.OSImage{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: runv1alpha3.OSImageSpec{KubernetesVersion: k8s,
				OS:    runv1alpha3.OSInfo{Type: "linux", Name: os, Version: "1", Arch: "amd64"},
				Image: runv1alpha3.MachineImageInfo{Type: "ova", Ref: runv1alpha3.JSONObject{"template": "/dc0/vm/" + name}}},
		}
	}
	release := func(version, k8s string, images ...string) *runv1alpha3.TanzuKubernetesRelease {
		t := &runv1alpha3.TanzuKubernetesRelease{
			ObjectMeta: metav1.ObjectMeta{Name: strings.ReplaceAll(version, "+", "---")},
			Spec: runv1alpha3.TanzuKubernetesReleaseSpec{Version: version, Kubernetes: runv1alpha3.KubernetesSpec{Version: k8s, ImageRepository: "projects.registry.vmware.com/tkg",
				Etcd: &runv1alpha3.ContainerImageInfo{ImageTag: "v3.6.5_vmware.2"}, CoreDNS: &runv1alpha3.ContainerImageInfo{ImageTag: "v1.12.4_vmware.1"}}},
		}
		for _, i := range images {
			t.Spec.OSImages = append(t.Spec.OSImages, corev1.LocalObjectReference{Name: i})
		}
		return t
	}
	objs := []client.Object{
		image("ubuntu-135", "v1.35.4+vmware.1", "ubuntu"), image("photon-135", "v1.35.4+vmware.1", "photon"),
		image("ubuntu-134", "v1.34.3+vmware.1", "ubuntu"), image("ubuntu-136", "v1.36.0+vmware.1", "ubuntu"),
		release("v1.35.4+vmware.1-tkg.1", "v1.35.4+vmware.1", "ubuntu-135", "photon-135"),
		release("v1.34.3+vmware.1-tkg.1", "v1.34.3+vmware.1", "ubuntu-134"),
		release("v1.36.0+vmware.1-tkg.1", "v1.36.0+vmware.1", "ubuntu-136"),
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	incompatible := &runv1alpha3.TanzuKubernetesRelease{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "v1.36.0---vmware.1-tkg.1"}, incompatible); err != nil {
		t.Fatal(err)
	}
	incompatible.Status.Conditions = runv1alpha3.Conditions{{Type: runv1alpha3.ConditionCompatible, Status: "False", LastTransitionTime: metav1.Now(), Reason: "TKGVersionNotSupported"}}
	if err := env.Client.Status().Update(ctx, incompatible); err != nil {
		t.Fatal(err)
	}
}

func cluster(version string, annotate bool, mdOS ...string) *clusterv1.Cluster {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wl"}}
	if annotate {
		c.Annotations = map[string]string{runv1alpha3.AnnotationResolveTKR: ""}
	}
	c.Spec.Topology.ClassRef.Name = "tkg-vsphere-default"
	c.Spec.Topology.Version = version
	for i, os := range mdOS {
		md := clusterv1.MachineDeploymentTopology{Name: "md-" + string(rune('0'+i)), Class: "tkg-worker"}
		if os != "" {
			md.Metadata.Annotations = map[string]string{runv1alpha3.AnnotationResolveOSImage: "os-name=" + os}
		}
		c.Spec.Topology.Workers.MachineDeployments = append(c.Spec.Topology.Workers.MachineDeployments, md)
	}
	return c
}

func tkrData(t *testing.T, vars []clusterv1.ClusterVariable) map[string]resolver.TKRData {
	t.Helper()
	for _, v := range vars {
		if v.Name == resolver.VariableTKRData {
			data := map[string]resolver.TKRData{}
			if err := json.Unmarshal(v.Value.Raw, &data); err != nil {
				t.Fatal(err)
			}
			return data
		}
	}
	return nil
}

func TestClusterDefaulter(t *testing.T) {
	catalogue(t)
	d := &resolver.ClusterDefaulter{Client: env.Client}
	ctx := t.Context()

	t.Run("a version prefix resolves to the newest compatible release", func(t *testing.T) {
		c := cluster("v1.35", true, "photon")
		if err := d.Default(ctx, c); err != nil {
			t.Fatal(err)
		}
		if c.Labels[runv1alpha3.LabelTKR] != "v1.35.4---vmware.1-tkg.1" || c.Spec.Topology.Version != "v1.35.4+vmware.1" {
			t.Fatalf("resolved to %v %s", c.Labels, c.Spec.Topology.Version)
		}
		cp := tkrData(t, c.Spec.Topology.Variables)["v1.35.4+vmware.1"]
		if cp.KubernetesSpec.ImageRepository != "projects.registry.vmware.com/tkg" || cp.Labels[runv1alpha3.LabelOSImage] == "" {
			t.Errorf("TKR_DATA of the control plane: %+v", cp)
		}
		md := tkrData(t, c.Spec.Topology.Workers.MachineDeployments[0].Variables.Overrides)["v1.35.4+vmware.1"]
		if md.OSImageRef["template"] != "/dc0/vm/photon-135" {
			t.Errorf("the machine deployment asked for photon and got %+v", md)
		}
	})

	t.Run("a custom image repository replaces the release's in TKR_DATA, as TKG's resolver does", func(t *testing.T) {
		c := cluster("v1.35", true, "")
		c.Spec.Topology.Variables = []clusterv1.ClusterVariable{{Name: resolver.VariableImageRepository,
			Value: apiextensionsv1.JSON{Raw: []byte(`{"host":"127.0.0.1:5002/tkg","tlsCertificateValidation":{"enabled":true}}`)}}}
		if err := d.Default(ctx, c); err != nil {
			t.Fatal(err)
		}
		for what, vars := range map[string][]clusterv1.ClusterVariable{
			"the control plane": c.Spec.Topology.Variables, "machine deployment 0": c.Spec.Topology.Workers.MachineDeployments[0].Variables.Overrides,
		} {
			spec := tkrData(t, vars)["v1.35.4+vmware.1"].KubernetesSpec
			if spec.ImageRepository != "127.0.0.1:5002/tkg" || spec.Etcd == nil || spec.Etcd.ImageRepository != "127.0.0.1:5002/tkg" ||
				spec.Etcd.ImageTag != "v3.6.5_vmware.2" || spec.CoreDNS == nil || spec.CoreDNS.ImageRepository != "127.0.0.1:5002/tkg" {
				t.Errorf("TKR_DATA of %s: %+v, etcd %+v, coredns %+v; want every image in 127.0.0.1:5002/tkg", what, spec, spec.Etcd, spec.CoreDNS)
			}
		}
		// The release itself is left as it was.
		tkr := &runv1alpha3.TanzuKubernetesRelease{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: "v1.35.4---vmware.1-tkg.1"}, tkr); err != nil || tkr.Spec.Kubernetes.ImageRepository != "projects.registry.vmware.com/tkg" {
			t.Errorf("the release changed: %v %+v", err, tkr.Spec.Kubernetes)
		}

		bad := cluster("v1.35", true)
		bad.Spec.Topology.Variables = []clusterv1.ClusterVariable{{Name: resolver.VariableImageRepository, Value: apiextensionsv1.JSON{Raw: []byte(`"127.0.0.1:5002/tkg"`)}}}
		if err := d.Default(ctx, bad); err == nil || !strings.Contains(err.Error(), "variable imageRepository of Cluster wl") {
			t.Errorf("a variable of the wrong shape: %v", err)
		}
	})

	t.Run("no prefix skips the incompatible v1.36", func(t *testing.T) {
		c := cluster("", true)
		if err := d.Default(ctx, c); err != nil {
			t.Fatal(err)
		}
		if c.Labels[runv1alpha3.LabelTKR] != "v1.35.4---vmware.1-tkg.1" {
			t.Fatalf("resolved to %v", c.Labels)
		}
	})

	t.Run("the ClusterClass's annotation counts too", func(t *testing.T) {
		class := &clusterv1.ClusterClass{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "tkg-vsphere-default",
			Annotations: map[string]string{runv1alpha3.AnnotationResolveTKR: ""}}}
		class.Spec.Infrastructure.TemplateRef = clusterv1.ClusterClassTemplateReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "VSphereClusterTemplate", Name: "x"}
		class.Spec.ControlPlane.TemplateRef = clusterv1.ClusterClassTemplateReference{APIVersion: "controlplane.cluster.x-k8s.io/v1beta2", Kind: "KubeadmControlPlaneTemplate", Name: "x"}
		if err := env.Client.Create(ctx, class); err != nil {
			t.Fatal(err)
		}
		c := cluster("v1.34", false)
		if err := d.Default(ctx, c); err != nil {
			t.Fatal(err)
		}
		if c.Labels[runv1alpha3.LabelTKR] != "v1.34.3---vmware.1-tkg.1" {
			t.Fatalf("resolved to %v", c.Labels)
		}
	})

	t.Run("an unannotated cluster of an unannotated class is left alone", func(t *testing.T) {
		c := cluster("v1.35", false)
		c.Spec.Topology.ClassRef.Name = "other"
		if err := d.Default(ctx, c); err != nil || c.Labels != nil {
			t.Fatalf("touched: %v %v", c.Labels, err)
		}
	})

	t.Run("a resolved cluster keeps its release while its version stays", func(t *testing.T) {
		c := cluster("v1.34.3+vmware.1", true)
		c.Labels = map[string]string{runv1alpha3.LabelTKR: "v1.34.3---vmware.1-tkg.1"}
		if err := d.Default(ctx, c); err != nil || c.Spec.Topology.Variables != nil {
			t.Fatalf("re-resolved: %v %v", c.Spec.Topology.Variables, err)
		}
	})

	t.Run("nothing resolves: the denial says what was asked and why each release was rejected", func(t *testing.T) {
		c := cluster("v1.34", true, "photon")
		err := d.Default(ctx, c)
		if err == nil {
			t.Fatal("resolved")
		}
		for _, want := range []string{
			"machine deployment 0 {version v1.34, TKR selector any, OSImage selector os-name=photon}",
			"v1.34.3---vmware.1-tkg.1: machine deployment 0: no OSImage matching os-name=photon",
			"v1.36.0---vmware.1-tkg.1: incompatible",
			"v1.35.4---vmware.1-tkg.1: control plane: version v1.35.4+vmware.1-tkg.1 does not match v1.34",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("denial lacks %q:\n%s", want, err)
			}
		}
	})
}
