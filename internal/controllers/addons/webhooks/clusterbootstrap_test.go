package webhooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/test/envtest"
	"github.com/slipway-dev/slipway/internal/tkg"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) { env = e }))
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
}

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// pkg is a Package named as TKG names them: {refName}.{version}.
func pkg(ns, refName, version string) *datapkgingv1alpha1.Package {
	return &datapkgingv1alpha1.Package{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: refName + "." + strings.ReplaceAll(version, "+", "--")},
		Spec: datapkgingv1alpha1.PackageSpec{RefName: refName, Version: version,
			Template: datapkgingv1alpha1.AppTemplateSpec{Spec: &kappctrlv1alpha1.AppSpec{}}},
	}
}

func provider(kind, group, name string) *runv1alpha3.ValuesFrom {
	return &runv1alpha3.ValuesFrom{ProviderRef: &corev1.TypedLocalObjectReference{APIGroup: ptr.To(group), Kind: kind, Name: name}}
}

// decode reads one object of a seeds/002 example.
func decode(t *testing.T, file string, into client.Object) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "api", "testdata", "seeds002", file))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.SplitN(string(data), "\n---\n", 2)[0]
	if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
		t.Fatal(err)
	}
}

func wantRule(t *testing.T, name string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: rejected: %v", name, err)
	case want != "" && err == nil:
		t.Errorf("%s: accepted, want an error naming %q", name, want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("%s: error %q does not name %q", name, err, want)
	}
}

func TestClusterBootstrapTemplate(t *testing.T) {
	sys := "cbt-system"
	create(t, namespace(sys), pkg(sys, "kapp-controller.tanzu.vmware.com", "0.50.1"), pkg(sys, "antrea.tanzu.vmware.com", "1.13.1"))
	v := &ClusterBootstrapTemplate{Client: env.Client, SystemNamespace: sys}
	good := func() *runv1alpha3.ClusterBootstrapTemplate {
		return &runv1alpha3.ClusterBootstrapTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: sys, Name: "v1.35.4---vmware.1-tkg.1"},
			Spec: &runv1alpha3.ClusterBootstrapTemplateSpec{
				Kapp: &runv1alpha3.ClusterBootstrapPackage{RefName: "kapp-controller.tanzu.vmware.com.0.50.1"},
				CNI:  &runv1alpha3.ClusterBootstrapPackage{RefName: "antrea.tanzu.vmware.com.1.13.1", ValuesFrom: provider("AntreaConfig", "cni.tanzu.vmware.com", "x")}}}
	}
	for _, tc := range []struct {
		name   string
		change func(*runv1alpha3.ClusterBootstrapTemplate)
		want   string
	}{
		{"good", func(*runv1alpha3.ClusterBootstrapTemplate) {}, ""},
		{"outside the system namespace", func(c *runv1alpha3.ClusterBootstrapTemplate) { c.Namespace = "default" }, "metadata.namespace: Forbidden: ClusterBootstrapTemplates belong in the system namespace cbt-system"},
		{"unknown package", func(c *runv1alpha3.ClusterBootstrapTemplate) { c.Spec.Kapp.RefName = "nosuch.1.0" },
			"spec.kapp.refName: Invalid value: \"nosuch.1.0\": no Package of this name in namespace cbt-system"},
		{"unknown additional package", func(c *runv1alpha3.ClusterBootstrapTemplate) {
			c.Spec.AdditionalPackages = []*runv1alpha3.ClusterBootstrapPackage{{RefName: "metrics-server.tanzu.vmware.com.9.9.9"}}
		}, "spec.additionalPackages[0].refName: Invalid value: \"metrics-server.tanzu.vmware.com.9.9.9\""},
		{"no kapp", func(c *runv1alpha3.ClusterBootstrapTemplate) { c.Spec.Kapp = nil }, "spec.kapp: Required value"},
		{"no cni", func(c *runv1alpha3.ClusterBootstrapTemplate) { c.Spec.CNI = nil }, "spec.cni: Required value"},
		{"two values sources", func(c *runv1alpha3.ClusterBootstrapTemplate) { c.Spec.CNI.ValuesFrom.SecretRef = "s" },
			"spec.cni.valuesFrom: Invalid value: \"secretRef, providerRef\": set only one of inline, secretRef and providerRef"},
	} {
		c := good()
		tc.change(c)
		_, err := v.ValidateCreate(t.Context(), c)
		wantRule(t, tc.name, err, tc.want)
	}
	old, same, changed := good(), good(), good()
	changed.Spec.CNI.RefName = "antrea.tanzu.vmware.com.1.11.2"
	_, err := v.ValidateUpdate(t.Context(), old, same)
	wantRule(t, "unchanged update", err, "")
	_, err = v.ValidateUpdate(t.Context(), old, changed)
	wantRule(t, "changed spec", err, "spec: Forbidden: ClusterBootstrapTemplate is immutable")
}

func TestClusterBootstrap(t *testing.T) {
	sys, ns := tkg.SystemNamespace, "cb-validation"
	create(t, namespace(sys), namespace(ns),
		pkg(sys, "kapp-controller.tanzu.vmware.com", "0.50.0"), pkg(sys, "kapp-controller.tanzu.vmware.com", "0.50.1"),
		pkg(sys, "antrea.tanzu.vmware.com", "1.11.2"), pkg(sys, "antrea.tanzu.vmware.com", "1.13.1"),
		pkg(sys, "calico.tanzu.vmware.com", "3.26.3"), pkg(ns, "metrics-server.tanzu.vmware.com", "0.6.4"),
		pkg(ns, "metrics-server.tanzu.vmware.com", "0.7.2"))
	w := &ClusterBootstrap{Client: env.Client, SystemNamespace: sys}
	good := func() *runv1alpha3.ClusterBootstrap {
		return &runv1alpha3.ClusterBootstrap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl"},
			Spec: &runv1alpha3.ClusterBootstrapTemplateSpec{
				Kapp: &runv1alpha3.ClusterBootstrapPackage{RefName: "kapp-controller.tanzu.vmware.com.0.50.0", ValuesFrom: provider("KappControllerConfig", "run.tanzu.vmware.com", "k")},
				CNI:  &runv1alpha3.ClusterBootstrapPackage{RefName: "antrea.tanzu.vmware.com.1.11.2", ValuesFrom: provider("AntreaConfig", "cni.tanzu.vmware.com", "a")},
				AdditionalPackages: []*runv1alpha3.ClusterBootstrapPackage{
					{RefName: "metrics-server.tanzu.vmware.com.0.6.4", ValuesFrom: &runv1alpha3.ValuesFrom{SecretRef: "ms"}}}}}
	}
	t.Run("create", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			change func(*runv1alpha3.ClusterBootstrap)
			want   string
		}{
			{"good", func(*runv1alpha3.ClusterBootstrap) {}, ""},
			{"no kapp", func(c *runv1alpha3.ClusterBootstrap) { c.Spec.Kapp = nil }, "spec.kapp: Required value"},
			{"no cni", func(c *runv1alpha3.ClusterBootstrap) { c.Spec.CNI = nil }, "spec.cni: Required value"},
			{"unknown package", func(c *runv1alpha3.ClusterBootstrap) { c.Spec.CNI.RefName = "antrea.tanzu.vmware.com.9.9.9" },
				"spec.cni.refName: Invalid value: \"antrea.tanzu.vmware.com.9.9.9\": no Package of this name in namespace cb-validation or tkg-system"},
			{"unknown additional package", func(c *runv1alpha3.ClusterBootstrap) { c.Spec.AdditionalPackages[0].RefName = "foo.example.com.1.0.0" },
				"spec.additionalPackages[0].refName"},
			{"two values sources", func(c *runv1alpha3.ClusterBootstrap) {
				c.Spec.Kapp.ValuesFrom.Inline = runv1alpha3.JSONObject{"a": "b"}
			},
				"spec.kapp.valuesFrom: Invalid value: \"inline, providerRef\""},
		} {
			c := good()
			tc.change(c)
			_, err := w.ValidateCreate(t.Context(), c)
			wantRule(t, tc.name, err, tc.want)
		}
	})
	t.Run("update", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			change func(*runv1alpha3.ClusterBootstrap)
			want   string
		}{
			{"upgrade", func(c *runv1alpha3.ClusterBootstrap) {
				c.Spec.CNI.RefName, c.Spec.AdditionalPackages[0].RefName = "antrea.tanzu.vmware.com.1.13.1", "metrics-server.tanzu.vmware.com.0.7.2"
			}, ""},
			{"values edited, same source", func(c *runv1alpha3.ClusterBootstrap) { c.Spec.AdditionalPackages[0].ValuesFrom.SecretRef = "ms2" }, ""},
			{"core package removed", func(c *runv1alpha3.ClusterBootstrap) { c.Spec.Kapp = nil }, "spec.kapp: Forbidden: package kapp-controller.tanzu.vmware.com.0.50.0 cannot be removed"},
			{"additional package removed", func(c *runv1alpha3.ClusterBootstrap) { c.Spec.AdditionalPackages = nil },
				"spec.additionalPackages: Forbidden: package metrics-server.tanzu.vmware.com.0.6.4 cannot be removed"},
			{"same version", func(c *runv1alpha3.ClusterBootstrap) { c.Spec.Kapp.RefName = "kapp-controller.tanzu.vmware.com.0.50.0" }, ""},
			{"cni changed to calico", func(c *runv1alpha3.ClusterBootstrap) {
				c.Spec.CNI.RefName, c.Spec.CNI.ValuesFrom = "calico.tanzu.vmware.com.3.26.3", provider("CalicoConfig", "cni.tanzu.vmware.com", "c")
			}, "spec.cni.refName: Forbidden: the package cannot change from antrea.tanzu.vmware.com to calico.tanzu.vmware.com"},
			{"values source changed", func(c *runv1alpha3.ClusterBootstrap) {
				c.Spec.AdditionalPackages[0].ValuesFrom = &runv1alpha3.ValuesFrom{Inline: runv1alpha3.JSONObject{"a": "b"}}
			}, "spec.additionalPackages[0].valuesFrom: Forbidden: the values of metrics-server.tanzu.vmware.com.0.6.4 come from secretRef and cannot change to \"inline\""},
			{"provider kind changed", func(c *runv1alpha3.ClusterBootstrap) {
				c.Spec.Kapp.ValuesFrom = provider("OtherConfig", "example.com", "k")
			},
				"spec.kapp.valuesFrom.providerRef: Forbidden: the values of kapp-controller.tanzu.vmware.com.0.50.0 come from a KappControllerConfig"},
		} {
			c := good()
			tc.change(c)
			_, err := w.ValidateUpdate(t.Context(), good(), c)
			wantRule(t, tc.name, err, tc.want)
		}
		newer := good()
		newer.Spec.Kapp.RefName = "kapp-controller.tanzu.vmware.com.0.50.1"
		_, err := w.ValidateUpdate(t.Context(), newer, good())
		wantRule(t, "downgrade", err, "spec.kapp.refName: Forbidden: kapp-controller.tanzu.vmware.com cannot be downgraded from 0.50.1 to 0.50.0")
	})
	t.Run("defaulting", func(t *testing.T) {
		tkr := &runv1alpha3.TanzuKubernetesRelease{ObjectMeta: metav1.ObjectMeta{Name: "v1.35.4---vmware.1-tkg.1"},
			Spec: runv1alpha3.TanzuKubernetesReleaseSpec{Version: "v1.35.4+vmware.1-tkg.1", Kubernetes: runv1alpha3.KubernetesSpec{Version: "v1.35.4+vmware.1"},
				BootstrapPackages: []corev1.LocalObjectReference{{Name: "kapp-controller.tanzu.vmware.com.0.50.1"}, {Name: "antrea.tanzu.vmware.com.1.13.1"},
					{Name: "calico.tanzu.vmware.com.3.26.3"}, {Name: "metrics-server.tanzu.vmware.com.0.7.2"}}}}
		cbt := &runv1alpha3.ClusterBootstrapTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: sys, Name: tkr.Name}, Spec: &runv1alpha3.ClusterBootstrapTemplateSpec{
			Kapp: &runv1alpha3.ClusterBootstrapPackage{RefName: "kapp-controller.tanzu.vmware.com.0.50.1", ValuesFrom: provider("KappControllerConfig", "run.tanzu.vmware.com", "kapp-template")},
			CNI:  &runv1alpha3.ClusterBootstrapPackage{RefName: "antrea.tanzu.vmware.com.1.13.1", ValuesFrom: provider("AntreaConfig", "cni.tanzu.vmware.com", "antrea-template")},
			CPI:  &runv1alpha3.ClusterBootstrapPackage{RefName: "vsphere-cpi.tanzu.vmware.com.1.27.0", ValuesFrom: provider("VSphereCPIConfig", "cpi.tanzu.vmware.com", "cpi-template")},
			AdditionalPackages: []*runv1alpha3.ClusterBootstrapPackage{
				{RefName: "metrics-server.tanzu.vmware.com.0.7.2", ValuesFrom: &runv1alpha3.ValuesFrom{Inline: runv1alpha3.JSONObject{"replicas": float64(2)}}}}}}
		create(t, tkr, cbt)
		annotated := func(spec *runv1alpha3.ClusterBootstrapTemplateSpec) *runv1alpha3.ClusterBootstrap {
			return &runv1alpha3.ClusterBootstrap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "partial",
				Annotations: map[string]string{runv1alpha3.AnnotationAddMissingFieldsFromTKR: tkr.Name}}, Spec: spec}
		}
		cb := annotated(&runv1alpha3.ClusterBootstrapTemplateSpec{CNI: &runv1alpha3.ClusterBootstrapPackage{RefName: "calico*",
			ValuesFrom: provider("CalicoConfig", "cni.tanzu.vmware.com", "mine")}})
		if err := w.Default(t.Context(), cb); err != nil {
			t.Fatal(err)
		}
		if cb.Spec.CNI.RefName != "calico.tanzu.vmware.com.3.26.3" || cb.Spec.CNI.ValuesFrom.ProviderRef.Name != "mine" {
			t.Errorf("cni: got %+v, want calico.tanzu.vmware.com.3.26.3 with the user's CalicoConfig", cb.Spec.CNI)
		}
		if cb.Spec.Kapp == nil || cb.Spec.Kapp.ValuesFrom.ProviderRef.Name != "kapp-template" || len(cb.Spec.AdditionalPackages) != 1 {
			t.Errorf("kapp and additional packages not filled in from the template: %+v", cb.Spec)
		}
		if cb.Spec.CPI != nil {
			t.Errorf("the ClusterBootstrap of a Cluster not known yet got the template's vSphere CPI: %+v", cb.Spec.CPI)
		}
		if _, err := w.ValidateCreate(t.Context(), cb); err != nil {
			t.Errorf("the defaulted object is rejected: %v", err)
		}
		// Once its Cluster is known to run on vSphere, it is given that CPI.
		vs := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "partial"}}
		vs.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "VSphereCluster", Name: "partial"}
		create(t, vs)
		onVSphere := annotated(&runv1alpha3.ClusterBootstrapTemplateSpec{})
		if err := w.Default(t.Context(), onVSphere); err != nil {
			t.Fatal(err)
		}
		if onVSphere.Spec.CPI == nil || onVSphere.Spec.CPI.RefName != "vsphere-cpi.tanzu.vmware.com.1.27.0" {
			t.Errorf("the ClusterBootstrap of a vSphere Cluster lacks the template's vSphere CPI: %+v", onVSphere.Spec.CPI)
		}
		for _, tc := range []struct{ refName, want string }{
			{"foo*", "refName \"foo*\" matches none of the bootstrap packages of TanzuKubernetesRelease v1.35.4---vmware.1-tkg.1"},
			{"*", "refName \"*\" matches 4 bootstrap packages"},
		} {
			err := w.Default(t.Context(), annotated(&runv1alpha3.ClusterBootstrapTemplateSpec{CNI: &runv1alpha3.ClusterBootstrapPackage{RefName: tc.refName}}))
			wantRule(t, "wildcard "+tc.refName, err, tc.want)
		}
		// CNI: none: annotated unmanaged, it is given everything but a CNI, and is valid so; a
		// CNI named beside the annotation is refused.
		unmanaged := annotated(&runv1alpha3.ClusterBootstrapTemplateSpec{})
		unmanaged.Name = "byo-cni"
		unmanaged.Annotations[runv1alpha3.AnnotationUnmanagedCNI] = ""
		if err := w.Default(t.Context(), unmanaged); err != nil {
			t.Fatal(err)
		}
		if unmanaged.Spec.CNI != nil || unmanaged.Spec.Kapp == nil || len(unmanaged.Spec.AdditionalPackages) != 1 {
			t.Errorf("an unmanaged-CNI ClusterBootstrap defaulted to %+v: want the template's packages but its CNI", unmanaged.Spec)
		}
		_, err := w.ValidateCreate(t.Context(), unmanaged)
		wantRule(t, "unmanaged CNI", err, "")
		unmanaged.Spec.CNI = &runv1alpha3.ClusterBootstrapPackage{RefName: "antrea.tanzu.vmware.com.1.13.1"}
		_, err = w.ValidateCreate(t.Context(), unmanaged)
		wantRule(t, "unmanaged CNI with a cni", err, "spec.cni: Forbidden: the ClusterBootstrap is annotated tkg.tanzu.vmware.com/unmanaged-cni")

		missing := annotated(&runv1alpha3.ClusterBootstrapTemplateSpec{})
		missing.Annotations[runv1alpha3.AnnotationAddMissingFieldsFromTKR] = "v9.9.9"
		wantRule(t, "unknown release", w.Default(t.Context(), missing), "metadata.annotations[tkg.tanzu.vmware.com/add-missing-fields-from-tkr]: Invalid value: \"v9.9.9\": no TanzuKubernetesRelease of this name")
	})
	t.Run("seeds/002 examples", func(t *testing.T) {
		const seedNS = "my-ns"
		create(t, namespace(seedNS), pkg(sys, "kapp-controller.tanzu.vmware.com", "0.30.3"),
			pkg(seedNS, "foobar1.example.com", "1.17.2"), pkg(sys, "antrea.tanzu.vmware.com", "1.2.3+vmware.1-tkg.1"),
			pkg(sys, "calico.tanzu.vmware.com", "3.19.1+vmware.1-tkg.1"))
		precreated := &runv1alpha3.ClusterBootstrap{}
		decode(t, "02-clusterbootstrap-precreated.yaml", precreated)
		if err := w.Default(t.Context(), precreated); err != nil {
			t.Fatal(err)
		}
		_, err := w.ValidateCreate(t.Context(), precreated)
		wantRule(t, "pre-created ClusterBootstrap", err, "")

		tkr := &runv1alpha3.TanzuKubernetesRelease{ObjectMeta: metav1.ObjectMeta{Name: "v1.22.4"},
			Spec: runv1alpha3.TanzuKubernetesReleaseSpec{Version: "v1.22.4", Kubernetes: runv1alpha3.KubernetesSpec{Version: "v1.22.4"},
				BootstrapPackages: []corev1.LocalObjectReference{{Name: "kapp-controller.tanzu.vmware.com.0.30.3"}, {Name: "calico.tanzu.vmware.com.3.19.1--vmware.1-tkg.1"}}}}
		cbt := &runv1alpha3.ClusterBootstrapTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: sys, Name: tkr.Name}, Spec: &runv1alpha3.ClusterBootstrapTemplateSpec{
			Kapp: &runv1alpha3.ClusterBootstrapPackage{RefName: "kapp-controller.tanzu.vmware.com.0.30.3"},
			CNI:  &runv1alpha3.ClusterBootstrapPackage{RefName: "antrea.tanzu.vmware.com.1.2.3--vmware.1-tkg.1"}}}
		create(t, tkr, cbt)
		defaulting := &runv1alpha3.ClusterBootstrap{}
		decode(t, "03-clusterbootstrap-defaulting.yaml", defaulting)
		if err := w.Default(t.Context(), defaulting); err != nil {
			t.Fatal(err)
		}
		_, err = w.ValidateCreate(t.Context(), defaulting)
		wantRule(t, "defaulted ClusterBootstrap", err, "")
		if defaulting.Spec.CNI.RefName != "calico.tanzu.vmware.com.3.19.1--vmware.1-tkg.1" || defaulting.Spec.Kapp == nil {
			t.Errorf("seeds/002 defaulting example: got %+v", defaulting.Spec)
		}
	})
}

func TestClusterPause(t *testing.T) {
	w := &ClusterPause{Client: env.Client}
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "paused",
		Labels: map[string]string{runv1alpha3.LabelTKR: "v1.34.3---vmware.1-tkg.1"}}}
	cluster.Spec.ClusterNetwork.Services.CIDRBlocks = []string{"10.96.0.0/12"}
	first := cluster.DeepCopy()
	if err := w.Default(t.Context(), first); err != nil || ptr.Deref(first.Spec.Paused, false) {
		t.Fatalf("creation: paused=%v err=%v, want not paused", first.Spec.Paused, err)
	}
	create(t, cluster)
	same := cluster.DeepCopy()
	if err := w.Default(t.Context(), same); err != nil || ptr.Deref(same.Spec.Paused, false) {
		t.Errorf("same release: paused=%v err=%v, want not paused", same.Spec.Paused, err)
	}
	upgraded := cluster.DeepCopy()
	upgraded.Labels[runv1alpha3.LabelTKR] = "v1.35.4---vmware.1-tkg.1"
	if err := w.Default(t.Context(), upgraded); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(upgraded.Spec.Paused, false) || upgraded.Annotations[tkg.AnnotationPaused] != "v1.35.4---vmware.1-tkg.1" {
		t.Errorf("new release: paused=%v annotations=%v, want paused for v1.35.4---vmware.1-tkg.1", upgraded.Spec.Paused, upgraded.Annotations)
	}
}
