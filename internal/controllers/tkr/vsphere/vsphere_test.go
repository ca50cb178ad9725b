package vsphere_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	neturl "net/url"
	"os"
	"strings"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/resolver"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/vsphere"
	"github.com/slipway-dev/slipway/internal/test/envtest"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) { env = e }))
}

const (
	release    = "v1.35.4+vmware.1-tkg.1"
	k8s        = "v1.35.4+vmware.1"
	ubuntuOVA  = release + "-ubuntu-2004"
	photonOVA  = release + "-photon-3"
	namespace  = "vsphere-resolver"
	datacenter = "DC0"
)

// simulatedVCenter starts vcsim with two node images: an ubuntu 20.04 template and a photon 3 VM that is
// not a template yet. It returns the server's host:port and the credentials that log in.
func simulatedVCenter(t *testing.T) (string, credentials) {
	t.Helper()
	model := simulator.VPX()
	if err := model.Create(); err != nil {
		t.Fatal(err)
	}
	model.Service.TLS = new(tls.Config)
	// Only these credentials log in (vcsim's default login takes any).
	model.Service.Listen = &neturl.URL{User: neturl.UserPassword("administrator@vsphere.local", "s3cret")}
	s := model.Service.NewServer()
	pass, _ := s.URL.User.Password()
	t.Cleanup(func() { s.Close(); model.Remove() })
	ctx := t.Context()
	c, err := govmomi.NewClient(ctx, s.URL, true)
	if err != nil {
		t.Fatal(err)
	}
	finder := find.NewFinder(c.Client, true)
	dc, err := finder.Datacenter(ctx, datacenter)
	if err != nil {
		t.Fatal(err)
	}
	finder.SetDatacenter(dc)
	image := func(vmName, newName, ova, distro, version string, template bool) {
		vm, err := finder.VirtualMachine(ctx, vmName)
		if err != nil {
			t.Fatal(err)
		}
		wait(t)(vm.PowerOff(ctx))
		props := []types.VAppPropertySpec{}
		for i, kv := range [][2]string{{vcenter.PropertyVersion, ova}, {vcenter.PropertyDistroName, distro},
			{vcenter.PropertyDistroVersion, version}, {vcenter.PropertyDistroArch, "amd64"}} {
			props = append(props, types.VAppPropertySpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationAdd},
				Info: &types.VAppPropertyInfo{Key: int32(i + 1), Id: kv[0], Category: vcenter.PropertyCategory, DefaultValue: kv[1]}})
		}
		wait(t)(vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{VAppConfig: &types.VmConfigSpec{Property: props}}))
		wait(t)(vm.Rename(ctx, newName))
		if template {
			if err := vm.MarkAsTemplate(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	image("DC0_H0_VM0", "ubuntu-2004-kube-"+k8s, ubuntuOVA, "ubuntu", "20.04", true)
	image("DC0_H0_VM1", "photon-3-kube-"+k8s, photonOVA, "photon", "3", false)
	return s.URL.Host, credentials{user: s.URL.User.Username(), pass: pass}
}

type credentials struct{ user, pass string }

// wait returns a function that waits for a vCenter task to succeed.
func wait(t *testing.T) func(*object.Task, error) {
	return func(task *object.Task, err error) {
		t.Helper()
		if err == nil {
			err = task.Wait(t.Context())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestListVMs(t *testing.T) {
	server, creds := simulatedVCenter(t)
	vms, err := vcenter.ListVMs(t.Context(), vcenter.Endpoint{Server: server, Datacenter: datacenter, Username: creds.user, Password: creds.pass})
	if err != nil {
		t.Fatal(err)
	}
	byOVA := map[string]vcenter.VM{}
	for _, vm := range vms {
		byOVA[vm.OVAVersion] = vm
	}
	if len(vms) != 2 {
		t.Fatalf("found %d node images, want 2 (the other VMs carry no OVA version): %+v", len(vms), vms)
	}
	u := byOVA[ubuntuOVA]
	if u.Path != "/DC0/vm/ubuntu-2004-kube-"+k8s || !strings.HasPrefix(u.MOID, "vm-") || !u.IsTemplate ||
		u.Distro != (vcenter.OS{Name: "ubuntu", Version: "2004", Arch: "amd64"}) {
		t.Errorf("ubuntu image %+v", u)
	}
	if p := byOVA[photonOVA]; p.IsTemplate || p.Distro.Version != "3" {
		t.Errorf("photon image %+v", p)
	}

	t.Run("bad input says what failed", func(t *testing.T) {
		for _, tc := range []struct {
			ep   vcenter.Endpoint
			want string
		}{
			{vcenter.Endpoint{Server: server, Datacenter: datacenter, Username: creds.user, Password: "wrong"}, `failed to log in to vCenter ` + server + ` as "` + creds.user + `"`},
			{vcenter.Endpoint{Server: server, Datacenter: "dc9", Username: creds.user, Password: creds.pass}, `datacenter "dc9" in vCenter`},
			{vcenter.Endpoint{Server: server, Datacenter: datacenter, Username: creds.user, Password: creds.pass, Thumbprint: "AA:BB"}, "failed to reach vCenter"},
		} {
			if _, err := vcenter.ListVMs(t.Context(), tc.ep); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%+v: error %v, want %q", tc.ep, err, tc.want)
			}
		}
	})
}

// ensureCatalogue makes the catalogue unless a test made it already.
func ensureCatalogue(t *testing.T) {
	t.Helper()
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: "v1.35.4---vmware.1-tkg.1"}, &runv1alpha3.TanzuKubernetesRelease{}); err == nil {
		return
	}
	catalogue(t)
}

// catalogue makes one release with a local image and two OVA images, as the default catalogue
// has them: the OVA images name only their version.
func catalogue(t *testing.T) {
	t.Helper()
	image := func(name, typ, os, version string, ref runv1alpha3.JSONObject) client.Object {
		return &runv1alpha3.OSImage{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: runv1alpha3.OSImageSpec{KubernetesVersion: k8s,
			OS: runv1alpha3.OSInfo{Type: "linux", Name: os, Version: version, Arch: "amd64"}, Image: runv1alpha3.MachineImageInfo{Type: typ, Ref: ref}}}
	}
	tkr := &runv1alpha3.TanzuKubernetesRelease{ObjectMeta: metav1.ObjectMeta{Name: "v1.35.4---vmware.1-tkg.1"},
		Spec: runv1alpha3.TanzuKubernetesReleaseSpec{Version: release, Kubernetes: runv1alpha3.KubernetesSpec{Version: k8s, ImageRepository: "projects.registry.vmware.com/tkg",
			KubeVIP: &runv1alpha3.ContainerImageInfo{ImageTag: "v0.8.3_vmware.1"}, Etcd: &runv1alpha3.ContainerImageInfo{ImageTag: "v3.6.5_vmware.2"},
			CoreDNS: &runv1alpha3.ContainerImageInfo{ImageTag: "v1.12.4_vmware.1"}},
			OSImages: []corev1.LocalObjectReference{{Name: "ubuntu"}, {Name: "photon"}, {Name: "local"}}}}
	for _, o := range []client.Object{
		image("ubuntu", "ova", "ubuntu", "2004", runv1alpha3.JSONObject{"version": ubuntuOVA}),
		image("photon", "ova", "photon", "3", runv1alpha3.JSONObject{"version": photonOVA}),
		image("local", "local", "local", "host", runv1alpha3.JSONObject{"kubernetesVersion": "v1.35.4"}),
		tkr,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
	} {
		if err := env.Client.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
}

// cluster is a topology Cluster resolved by the TKR resolver: the control plane and one machine
// deployment on the images the selectors pick.
func cluster(t *testing.T, name, server, cpImage, mdImage string) *clusterv1.Cluster {
	t.Helper()
	vc, _ := json.Marshal(map[string]string{"server": server, "datacenter": "/" + datacenter})
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
		Annotations: map[string]string{runv1alpha3.AnnotationResolveTKR: ""}}}
	c.Spec.Topology = clusterv1.Topology{ClassRef: clusterv1.ClusterClassRef{Name: "tkg-vsphere-default-v1.0.0"}, Version: "v1.35",
		Variables: []clusterv1.ClusterVariable{{Name: vsphere.VariableVCenter, Value: apiextensionsv1.JSON{Raw: vc}}}}
	c.Spec.Topology.ControlPlane.Metadata.Annotations = map[string]string{runv1alpha3.AnnotationResolveOSImage: "os-name=" + cpImage}
	c.Spec.Topology.Workers.MachineDeployments = []clusterv1.MachineDeploymentTopology{{Class: "tkg-worker", Name: "md-0",
		Metadata: clusterv1.ObjectMeta{Annotations: map[string]string{runv1alpha3.AnnotationResolveOSImage: "os-name=" + mdImage}}}}
	if err := (&resolver.ClusterDefaulter{Client: env.Client}).Default(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

func osImageRef(t *testing.T, vars []clusterv1.ClusterVariable) runv1alpha3.JSONObject {
	t.Helper()
	for _, v := range vars {
		if v.Name == resolver.VariableTKRData {
			data := map[string]resolver.TKRData{}
			if err := json.Unmarshal(v.Value.Raw, &data); err != nil {
				t.Fatal(err)
			}
			return data[k8s].OSImageRef
		}
	}
	t.Fatal("no TKR_DATA")
	return nil
}

func TestTemplateResolver(t *testing.T) {
	server, creds := simulatedVCenter(t)
	ensureCatalogue(t)
	ctx := t.Context()
	for _, name := range []string{"ubuntu-cluster", "photon-cluster", "local-cluster"} {
		if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			StringData: map[string]string{"username": creds.user, "password": creds.pass}}); err != nil {
			t.Fatal(err)
		}
	}
	r := &vsphere.TemplateResolver{Client: env.Client}

	t.Run("the control plane and machine deployments get their template", func(t *testing.T) {
		c := cluster(t, "ubuntu-cluster", server, "ubuntu", "ubuntu")
		if err := r.Default(ctx, c); err != nil {
			t.Fatal(err)
		}
		for _, ref := range []runv1alpha3.JSONObject{osImageRef(t, c.Spec.Topology.Variables), osImageRef(t, c.Spec.Topology.Workers.MachineDeployments[0].Variables.Overrides)} {
			if ref["template"] != "/DC0/vm/ubuntu-2004-kube-"+k8s || !strings.HasPrefix(ref["moid"].(string), "vm-") || ref["version"] != ubuntuOVA {
				t.Errorf("osImageRef %v", ref)
			}
		}

		// Resolved once: a later admission does not ask vCenter again.
		calls := 0
		again := &vsphere.TemplateResolver{Client: env.Client, ListVMs: func(context.Context, vcenter.Endpoint) ([]vcenter.VM, error) { calls++; return nil, nil }}
		if err := again.Default(ctx, c); err != nil || calls != 0 {
			t.Errorf("second admission: %v, %d calls to vCenter", err, calls)
		}
	})

	t.Run("a VM that is not a template is named in the denial", func(t *testing.T) {
		c := cluster(t, "photon-cluster", server, "ubuntu", "photon")
		err := r.Default(ctx, c)
		want := "unable to find VM Template associated with OVA Version " + photonOVA + " (photon 3 amd64) in datacenter /DC0, but found these VM(s) [/DC0/vm/photon-3-kube-" + k8s + "] that can be used once converted to a VM Template"
		if err == nil || err.Error() != want {
			t.Errorf("denial %v\nwant      %s", err, want)
		}
	})

	t.Run("no VM at all asks for an upload", func(t *testing.T) {
		c := cluster(t, "photon-cluster", server, "photon", "photon")
		err := (&vsphere.TemplateResolver{Client: env.Client, ListVMs: func(context.Context, vcenter.Endpoint) ([]vcenter.VM, error) { return nil, nil }}).Default(ctx, c)
		if err == nil || !strings.Contains(err.Error(), "unable to find VM Template associated with OVA Version "+photonOVA+" (photon 3 amd64) in datacenter /DC0. Please upload at least one VM Template to continue") {
			t.Errorf("denial %v", err)
		}
	})

	t.Run("local images need no template", func(t *testing.T) {
		c := cluster(t, "local-cluster", server, "local", "local")
		calls := 0
		r := &vsphere.TemplateResolver{Client: env.Client, ListVMs: func(context.Context, vcenter.Endpoint) ([]vcenter.VM, error) { calls++; return nil, nil }}
		if err := r.Default(ctx, c); err != nil || calls != 0 {
			t.Errorf("local images: %v, %d calls to vCenter", err, calls)
		}
	})

	t.Run("missing configuration is named", func(t *testing.T) {
		c := cluster(t, "no-secret", server, "ubuntu", "ubuntu")
		if err := r.Default(ctx, c); err == nil || !strings.Contains(err.Error(), "vCenter credentials of cluster no-secret: Secret vsphere-resolver/no-secret") {
			t.Errorf("without credentials: %v", err)
		}
		c = cluster(t, "ubuntu-cluster", server, "ubuntu", "ubuntu")
		c.Spec.Topology.Variables = c.Spec.Topology.Variables[1:]
		if err := r.Default(ctx, c); err == nil || !strings.Contains(err.Error(), "needs variable vcenter with server and datacenter") {
			t.Errorf("without the vcenter variable: %v", err)
		}
	})

	t.Run("an unresolved cluster is left to the TKR resolver", func(t *testing.T) {
		c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "unresolved"}}
		c.Spec.Topology = clusterv1.Topology{ClassRef: clusterv1.ClusterClassRef{Name: "tkg-vsphere-default-v1.0.0"}, Version: "v1.35"}
		before := c.DeepCopy()
		if err := r.Default(ctx, c); err != nil || !equalJSON(t, before, c) {
			t.Errorf("unresolved cluster: %v, changed: %v", err, c.Spec.Topology)
		}
	})
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
