package vsphere_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/cluster-api/controllers"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/carvel/deploy"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/resolver"
	"github.com/slipway-dev/slipway/internal/controllers/tkr/vsphere"
	"github.com/slipway-dev/slipway/internal/test/envtest"
	"github.com/slipway-dev/slipway/internal/test/packagesource"
)

// startTopology runs Cluster API's ClusterClass and Cluster topology reconcilers against the
// environment. The CRDs get the contract labels clusterctl's kustomizations give them.
func startTopology(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := env.Client.List(ctx, crds); err != nil {
		t.Fatal(err)
	}
	for i := range crds.Items {
		crd := &crds.Items[i]
		if !strings.HasSuffix(crd.Spec.Group, "cluster.x-k8s.io") {
			continue
		}
		var served []string
		for _, v := range crd.Spec.Versions {
			if v.Served && strings.HasPrefix(v.Name, "v1beta2") {
				served = append(served, v.Name)
			}
		}
		if len(served) == 0 {
			continue
		}
		patch := client.MergeFrom(crd.DeepCopy())
		if crd.Labels == nil {
			crd.Labels = map[string]string{}
		}
		crd.Labels[clusterv1.GroupVersion.Group+"/v1beta2"] = strings.Join(served, "_")
		if err := env.Client.Patch(ctx, crd, patch); err != nil {
			t.Fatal(err)
		}
	}
	// The ClusterClass reconciler watches runtime extensions too.
	if err := runtimev1.AddToScheme(env.Scheme); err != nil {
		t.Fatal(err)
	}
	env.StartManager(func(mgr ctrl.Manager) error {
		cc, err := clustercache.SetupWithManager(context.Background(), mgr, clustercache.Options{SecretClient: mgr.GetClient(), Client: clustercache.ClientOptions{UserAgent: "slipway-test"}}, controller.Options{MaxConcurrentReconciles: 1})
		if err != nil {
			return err
		}
		if err := (&controllers.ClusterClassReconciler{Client: mgr.GetClient()}).SetupWithManager(context.Background(), mgr, controller.Options{}); err != nil {
			return err
		}
		return (&controllers.ClusterTopologyReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), ClusterCache: cc}).SetupWithManager(context.Background(), mgr, controller.Options{})
	})
}

// TestVSphereClusterClass installs tkg-clusterclass-vsphere's ClusterClass and makes a Cluster of
// it the way TKG does: resolved by the TKR resolver, its VM template found in vCenter (vcsim) by
// tkr-vsphere-resolver, then expanded by Cluster API's topology controller into the CAPV and
// kubeadm objects, which must carry the cluster's vcenter settings, its endpoint, the template
// and the release's kube-vip image.
func TestVSphereClusterClass(t *testing.T) {
	server, creds := simulatedVCenter(t)
	ctx := t.Context()
	const ns = "vsphere-topology"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	ensureCatalogue(t)
	out, err := packagesource.Render(t, filepath.Join("tkg-clusterclass-vsphere.tanzu.vmware.com", "0.1.0"), "namespace: "+ns+"\n")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := deploy.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	startTopology(t)
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vc1"},
		StringData: map[string]string{"username": creds.user, "password": creds.pass}}); err != nil {
		t.Fatal(err)
	}

	variable := func(name string, v any) clusterv1.ClusterVariable {
		raw, _ := json.Marshal(v)
		return clusterv1.ClusterVariable{Name: name, Value: apiextensionsv1.JSON{Raw: raw}}
	}
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vc1"}}
	c.Spec.ClusterNetwork.Pods.CIDRBlocks = []string{"100.96.0.0/11"}
	c.Spec.ClusterNetwork.Services.CIDRBlocks = []string{"100.64.0.0/13"}
	c.Spec.Topology = clusterv1.Topology{ClassRef: clusterv1.ClusterClassRef{Name: "tkg-vsphere-default-v1.0.0"}, Version: "v1.35",
		Variables: []clusterv1.ClusterVariable{
			variable("vcenter", map[string]string{"server": server, "datacenter": "/" + datacenter, "network": "/DC0/network/VM Network",
				"datastore": "/DC0/datastore/LocalDS_0", "folder": "/DC0/vm", "resourcePool": "/DC0/host/DC0_C0/Resources", "cloneMode": "fullClone"}),
			variable("apiServerEndpoint", "10.180.130.162"),
			variable("apiServerPort", 6443),
			variable("user", map[string]any{"sshAuthorizedKeys": []string{"ssh-ed25519 AAAA test@example"}}),
			variable("controlPlane", map[string]any{"machine": map[string]int{"diskGiB": 40, "memoryMiB": 8192, "numCPUs": 4},
				"network": map[string][]string{"nameservers": {"10.0.0.2", "10.0.0.3"}}}),
			variable("worker", map[string]any{"machine": map[string]int{"diskGiB": 20, "memoryMiB": 4096, "numCPUs": 2}}),
			variable("controlPlaneTaint", true),
			variable("nodePoolLabels", []map[string]string{{"key": "pool", "value": "md-0"}}),
			// The node families: time, audit, trust, a registry without TLS verification, an
			// IP pool, a system-wide proxy.
			variable("ntpServers", []string{"time.example.com"}),
			variable("auditLogging", map[string]bool{"enabled": true}),
			variable("trust", map[string]any{"additionalTrustedCAs": []map[string]string{{"name": "proxy", "data": base64.StdEncoding.EncodeToString([]byte(testCA))}}}),
			variable("imageRepository", map[string]any{"host": "registry.example.com", "tlsCertificateValidation": map[string]bool{"enabled": false}}),
			variable("network", map[string]any{"addressesFromPools": []map[string]string{{"apiGroup": "ipam.cluster.x-k8s.io", "kind": "InClusterIPPool", "name": "nodes"}}}),
			variable("proxy", map[string]any{"httpProxy": "http://proxy:3128", "httpsProxy": "http://proxy:3128", "noProxy": []string{".svc"}, "systemWide": true}),
		}}
	c.Spec.Topology.ControlPlane.Metadata.Annotations = map[string]string{runv1alpha3.AnnotationResolveOSImage: "os-name=ubuntu"}
	c.Spec.Topology.Workers.MachineDeployments = []clusterv1.MachineDeploymentTopology{{Class: "tkg-worker", Name: "md-0",
		Metadata: clusterv1.ObjectMeta{Annotations: map[string]string{runv1alpha3.AnnotationResolveOSImage: "os-name=ubuntu"}}}}
	if err := (&resolver.ClusterDefaulter{Client: env.Client}).Default(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := (&vsphere.TemplateResolver{Client: env.Client}).Default(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, c); err != nil {
		t.Fatal(err)
	}

	// of returns the one object of a kind that the topology made for a cluster and, when md is
	// set, for that machine deployment, else for none; get, of vc1.
	of := func(cluster, kind, apiVersion, md string) (*unstructured.Unstructured, error) {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(apiVersion)
		list.SetKind(kind + "List")
		if err := env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster}); err != nil {
			return nil, err
		}
		var found []*unstructured.Unstructured
		for i := range list.Items {
			if list.Items[i].GetLabels()[clusterv1.ClusterTopologyMachineDeploymentNameLabel] == md {
				found = append(found, &list.Items[i])
			}
		}
		if len(found) != 1 {
			return nil, fmt.Errorf("%d %s objects of the cluster (machine deployment %q)", len(found), kind, md)
		}
		return found[0], nil
	}
	get := func(kind, apiVersion, md string) (*unstructured.Unstructured, error) {
		return of("vc1", kind, apiVersion, md)
	}
	template := "/DC0/vm/ubuntu-2004-kube-" + k8s
	envtest.Eventually(t, time.Minute, "the topology's vSphere objects", func() error {
		vc, err := get("VSphereCluster", "infrastructure.cluster.x-k8s.io/v1beta2", "")
		if err != nil {
			// Say why: the topology controller reports on the Cluster, the ClusterClass on itself.
			cluster, class := &clusterv1.Cluster{}, &clusterv1.ClusterClass{}
			_ = env.Client.Get(ctx, client.ObjectKeyFromObject(c), cluster)
			_ = env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "tkg-vsphere-default-v1.0.0"}, class)
			return fmt.Errorf("%w; Cluster conditions %v; ClusterClass conditions %v", err, cluster.Status.Conditions, class.Status.Conditions)
		}
		spec := vc.Object["spec"].(map[string]any)
		if spec["server"] != server || fmt.Sprint(spec["controlPlaneEndpoint"]) != "map[host:10.180.130.162 port:6443]" ||
			fmt.Sprint(spec["identityRef"]) != "map[kind:Secret name:vc1]" {
			return fmt.Errorf("VSphereCluster spec %v", spec)
		}
		nameservers := map[string]string{"": "[10.0.0.2 10.0.0.3]", "md-0": "<nil>"}
		for md, want := range map[string]string{"": "map[diskGiB:40 numCPUs:4]", "md-0": "map[diskGiB:20 numCPUs:2]"} {
			role := "control plane"
			if md != "" {
				role = "machine deployment " + md
			}
			mt, err := get("VSphereMachineTemplate", "infrastructure.cluster.x-k8s.io/v1beta2", md)
			if err != nil {
				return fmt.Errorf("%s: %w", role, err)
			}
			s, _, _ := unstructured.NestedMap(mt.Object, "spec", "template", "spec")
			devices, _, _ := unstructured.NestedSlice(s, "network", "devices")
			if s["template"] != template || s["datacenter"] != "/DC0" || s["server"] != server || s["datastore"] != "/DC0/datastore/LocalDS_0" ||
				s["cloneMode"] != "fullClone" || len(devices) != 1 || devices[0].(map[string]any)["networkName"] != "/DC0/network/VM Network" ||
				fmt.Sprintf("map[diskGiB:%v numCPUs:%v]", s["diskGiB"], s["numCPUs"]) != want || s["thumbprint"] != nil {
				return fmt.Errorf("%s VSphereMachineTemplate spec %v", role, s)
			}
			// Addresses from the pool instead of DHCP; the role's name servers.
			device := devices[0].(map[string]any)
			if fmt.Sprint(device["addressesFromPools"]) != "[map[apiGroup:ipam.cluster.x-k8s.io kind:InClusterIPPool name:nodes]]" || device["dhcp4"] != nil ||
				fmt.Sprint(device["nameservers"]) != nameservers[md] {
				return fmt.Errorf("%s VSphereMachineTemplate network device %v", role, device)
			}
		}
		kcp, err := get("KubeadmControlPlane", "controlplane.cluster.x-k8s.io/v1beta2", "")
		if err != nil {
			return err
		}
		files, _, _ := unstructured.NestedSlice(kcp.Object, "spec", "kubeadmConfigSpec", "files")
		// The cluster's imageRepository replaces the release's: kube-vip and kubeadm's images
		// come from the copy.
		if len(files) == 0 || !strings.Contains(fmt.Sprint(files[0]), "image: registry.example.com/kube-vip:v0.8.3_vmware.1") ||
			!strings.Contains(fmt.Sprint(files[0]), `{name: address, value: "10.180.130.162"}`) {
			return fmt.Errorf("KubeadmControlPlane files %v", files)
		}
		// kubeadm runs the release's images, from the copy.
		cc, _, _ := unstructured.NestedMap(kcp.Object, "spec", "kubeadmConfigSpec", "clusterConfiguration")
		if cc["imageRepository"] != "registry.example.com" || fmt.Sprint(cc["etcd"]) != "map[local:map[imageTag:v3.6.5_vmware.2]]" ||
			fmt.Sprint(cc["dns"]) != "map[imageTag:v1.12.4_vmware.1]" {
			return fmt.Errorf("KubeadmControlPlane's kubeadm images: imageRepository %v etcd %v dns %v", cc["imageRepository"], cc["etcd"], cc["dns"])
		}
		kct, err := get("KubeadmConfigTemplate", "bootstrap.cluster.x-k8s.io/v1beta2", "md-0")
		if err != nil {
			return err
		}
		kctSpec, _, _ := unstructured.NestedMap(kct.Object, "spec", "template", "spec")
		kcpSpec, _, _ := unstructured.NestedMap(kcp.Object, "spec", "kubeadmConfigSpec")
		if err := checkNodeFamilies("control plane", kcpSpec, true); err != nil {
			return err
		}
		if err := checkNodeFamilies("workers", kctSpec, false); err != nil {
			return err
		}
		args, _, _ := unstructured.NestedSlice(kct.Object, "spec", "template", "spec", "joinConfiguration", "nodeRegistration", "kubeletExtraArgs")
		if !strings.Contains(fmt.Sprint(args), "map[name:node-labels value:pool=md-0]") || !strings.Contains(fmt.Sprint(args), "cloud-provider") {
			return fmt.Errorf("worker kubelet args %v", args)
		}
		users, _, _ := unstructured.NestedSlice(kcp.Object, "spec", "kubeadmConfigSpec", "users")
		if len(users) != 1 || !strings.Contains(fmt.Sprint(users[0]), "ssh-ed25519 AAAA test@example") {
			return fmt.Errorf("KubeadmControlPlane users %v", users)
		}
		// An IPv4 cluster has none of the IPv6 settings.
		if err := checkIPv6("vc1 (IPv4)", kcpSpec, kctSpec, false, false); err != nil {
			return err
		}
		return nil
	})

	// A dual-stack cluster with IPv6 primary (TKG_IP_FAMILY ipv6,ipv4), its nodes on DHCP: both
	// DHCPs, localhost on ::1, the API server advertised on IPv6, every component bound on it.
	dual := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vc2"}}
	dual.Spec.ClusterNetwork.Pods.CIDRBlocks = []string{"fd00:100:96::/48", "100.96.0.0/11"}
	dual.Spec.ClusterNetwork.Services.CIDRBlocks = []string{"fd00:100:64::/108", "100.64.0.0/13"}
	dual.Spec.Topology = clusterv1.Topology{ClassRef: c.Spec.Topology.ClassRef, Version: c.Spec.Topology.Version, Variables: []clusterv1.ClusterVariable{
		variable("vcenter", map[string]string{"server": server, "datacenter": "/" + datacenter, "network": "/DC0/network/VM Network",
			"datastore": "/DC0/datastore/LocalDS_0", "folder": "/DC0/vm", "resourcePool": "/DC0/host/DC0_C0/Resources", "cloneMode": "fullClone"}),
		variable("apiServerEndpoint", "fd00::10"),
		variable("network", map[string]any{"ipv6Primary": true}),
	}}
	dual.Spec.Topology.ControlPlane.Metadata.Annotations = c.Spec.Topology.ControlPlane.Metadata.Annotations
	dual.Spec.Topology.Workers.MachineDeployments = []clusterv1.MachineDeploymentTopology{{Class: "tkg-worker", Name: "md-0",
		Metadata: clusterv1.ObjectMeta{Annotations: map[string]string{runv1alpha3.AnnotationResolveOSImage: "os-name=ubuntu"}}}}
	if err := (&resolver.ClusterDefaulter{Client: env.Client}).Default(ctx, dual); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vc2"},
		StringData: map[string]string{"username": creds.user, "password": creds.pass}}); err != nil {
		t.Fatal(err)
	}
	if err := (&vsphere.TemplateResolver{Client: env.Client}).Default(ctx, dual); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, dual); err != nil {
		t.Fatal(err)
	}
	envtest.Eventually(t, time.Minute, "the dual-stack cluster's objects", func() error {
		for _, md := range []string{"", "md-0"} {
			mt, err := of("vc2", "VSphereMachineTemplate", "infrastructure.cluster.x-k8s.io/v1beta2", md)
			if err != nil {
				return err
			}
			devices, _, _ := unstructured.NestedSlice(mt.Object, "spec", "template", "spec", "network", "devices")
			if len(devices) != 1 || devices[0].(map[string]any)["dhcp4"] != true || devices[0].(map[string]any)["dhcp6"] != true {
				return fmt.Errorf("vc2 %q network devices %v: want DHCPv4 and DHCPv6", md, devices)
			}
		}
		kcp, err := of("vc2", "KubeadmControlPlane", "controlplane.cluster.x-k8s.io/v1beta2", "")
		if err != nil {
			return err
		}
		kct, err := of("vc2", "KubeadmConfigTemplate", "bootstrap.cluster.x-k8s.io/v1beta2", "md-0")
		if err != nil {
			return err
		}
		kcpSpec, _, _ := unstructured.NestedMap(kcp.Object, "spec", "kubeadmConfigSpec")
		kctSpec, _, _ := unstructured.NestedMap(kct.Object, "spec", "template", "spec")
		// Without an imageRepository the release's own repository stays.
		if repo, _, _ := unstructured.NestedString(kcpSpec, "clusterConfiguration", "imageRepository"); repo != "projects.registry.vmware.com/tkg" {
			return fmt.Errorf("vc2 kubeadm imageRepository %q, want the release's projects.registry.vmware.com/tkg", repo)
		}
		return checkIPv6("vc2 (dual-stack, IPv6 primary)", kcpSpec, kctSpec, true, true)
	})

	// The class's patches converge: the topology controller, looking at both clusters again and
	// again, writes none of what it made once more.
	var made []client.Object
	for _, cluster := range []string{"vc1", "vc2"} {
		for _, o := range []struct{ kind, apiVersion, md string }{
			{"VSphereCluster", "infrastructure.cluster.x-k8s.io/v1beta2", ""},
			{"VSphereMachineTemplate", "infrastructure.cluster.x-k8s.io/v1beta2", ""},
			{"VSphereMachineTemplate", "infrastructure.cluster.x-k8s.io/v1beta2", "md-0"},
			{"KubeadmControlPlane", "controlplane.cluster.x-k8s.io/v1beta2", ""},
			{"KubeadmConfigTemplate", "bootstrap.cluster.x-k8s.io/v1beta2", "md-0"},
		} {
			u, err := of(cluster, o.kind, o.apiVersion, o.md)
			if err != nil {
				t.Fatal(err)
			}
			made = append(made, u)
		}
	}
	// A change of the Clusters that changes none of their topology makes the controller compute
	// every object again within the window.
	for _, name := range []string{"vc1", "vc2"} {
		cl := &clusterv1.Cluster{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cl); err != nil {
			t.Fatal(err)
		}
		before := cl.DeepCopy()
		cl.Annotations["test.slipway.dev/reconcile"] = "again"
		if err := env.Client.Patch(ctx, cl, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
	}
	envtest.ExpectStill(t, 5*time.Second, envtest.On(env.Client, made...))
}

// checkIPv6 checks a cluster's kubeadm configurations for the IPv6 settings: localhost on ::1
// when it has IPv6; when IPv6 is primary, kubeadm's advertise address "::" with the node's IPv6
// address in /etc/hosts, and the API server's, controller manager's and scheduler's
// bind addresses "::"; every kubelet's node-ip, "::" when IPv6 is primary, else 0.0.0.0.
func checkIPv6(name string, kcp, kct map[string]any, hasIPv6, primary bool) error {
	has := func(spec map[string]any, want string, path ...string) bool {
		v, _, _ := unstructured.NestedFieldNoCopy(spec, path...)
		return strings.Contains(fmt.Sprint(v), want)
	}
	for what, got := range map[string]bool{
		"the control plane's ::1 localhost": has(kcp, `echo "::1         localhost"`, "preKubeadmCommands"),
		"the workers' ::1 localhost":        has(kct, `echo "::1         localhost"`, "preKubeadmCommands"),
	} {
		if got != hasIPv6 {
			return fmt.Errorf("%s: %s is %v, want %v", name, what, got, hasIPv6)
		}
	}
	for what, got := range map[string]bool{
		"kubeadm init's advertise address ::":      has(kcp, "advertiseAddress:::", "initConfiguration", "localAPIEndpoint"),
		"kubeadm join's advertise address ::":      has(kcp, "advertiseAddress:::", "joinConfiguration", "controlPlane", "localAPIEndpoint"),
		"the node's IPv6 address in /etc/hosts":    has(kcp, "ip -6 -json addr show dev eth0", "preKubeadmCommands"),
		"the API server's bind address ::":         has(kcp, "map[name:bind-address value:::]", "clusterConfiguration", "apiServer", "extraArgs"),
		"the API server's advertise address":       has(kcp, "map[name:advertise-address value:fd00::10]", "clusterConfiguration", "apiServer", "extraArgs"),
		"the controller manager's bind address ::": has(kcp, "map[name:bind-address value:::]", "clusterConfiguration", "controllerManager", "extraArgs"),
		"the scheduler's bind address ::":          has(kcp, "map[name:bind-address value:::]", "clusterConfiguration", "scheduler", "extraArgs"),
	} {
		if got != primary {
			return fmt.Errorf("%s: %s is %v, want %v:\ncontrol plane %v\nworkers %v", name, what, got, primary, kcp, kct)
		}
	}
	// Every kubelet has the unspecified address of its node's family as its node IP, so that it
	// reports an address before the CPI sets one.
	nodeIP := "map[name:node-ip value:0.0.0.0]"
	if primary {
		nodeIP = "map[name:node-ip value:::]"
	}
	for what, got := range map[string]bool{
		"kubeadm init's kubelet": has(kcp, nodeIP, "initConfiguration", "nodeRegistration", "kubeletExtraArgs"),
		"kubeadm join's kubelet": has(kcp, nodeIP, "joinConfiguration", "nodeRegistration", "kubeletExtraArgs"),
		"the workers' kubelets":  has(kct, nodeIP, "joinConfiguration", "nodeRegistration", "kubeletExtraArgs"),
	} {
		if !got {
			return fmt.Errorf("%s: %s lacks %s:\ncontrol plane %v\nworkers %v", name, what, nodeIP, kcp, kct)
		}
	}
	return nil
}

// testCA is a CA certificate, as TKG_PROXY_CA_CERT gives one.
const testCA = `-----BEGIN CERTIFICATE-----
MIIBlDCCATugAwIBAgIUCPFLYgO4dxOckX1yX+myErnw1vswCgYIKoZIzj0EAwIw
HzEdMBsGA1UEAwwUcmVnaXN0cnkuZXhhbXBsZS5jb20wIBcNMjYxMTI3MTg1MTU5
WhgPMjEyNjExMDMxODUxNTlaMB8xHTAbBgNVBAMMFHJlZ2lzdHJ5LmV4YW1wbGUu
Y29tMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEZv06FdjGaAvMpODW4BtRFx3v
W5QU92QasnkSbM6Dxk852QvDbJ0UZ4bFSMAN79Aidt1tCMOIWf2XzdwPEdhOKqNT
MFEwHQYDVR0OBBYEFAWWihkCbxgrYVZtNfuFgGDWXO75MB8GA1UdIwQYMBaAFAWW
ihkCbxgrYVZtNfuFgGDWXO75MA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwID
RwAwRAIgceHLRnn1+ZRVVzgmlvmbV7Ymad2J7ldDKpONygkVS50CICTW4mKM9wMl
yjsg/LwVNCLLNTgLTp8akiwzok+vLOu1
-----END CERTIFICATE-----
`

// checkNodeFamilies checks what the node-family variables make of a kubeadm configuration: the
// NTP servers, the trusted CA, the registry's hosts.toml, the system-wide proxy, and on the
// control plane the audit policy and the API server's audit flags.
func checkNodeFamilies(role string, spec map[string]any, controlPlane bool) error {
	files := map[string]string{}
	list, _, _ := unstructured.NestedSlice(spec, "files")
	for _, f := range list {
		m := f.(map[string]any)
		files[fmt.Sprint(m["path"])] = fmt.Sprint(m["content"])
	}
	want := map[string]string{
		"/usr/local/share/ca-certificates/tkg-custom-ca.crt":       strings.TrimSpace(testCA),
		"/etc/containerd/certs.d/registry.example.com/hosts.toml":  "skip_verify = true",
		"/etc/profile.d/tkg-system-proxy.sh":                       "export HTTPS_PROXY=http://proxy:3128 https_proxy=http://proxy:3128",
		"/etc/systemd/system/containerd.service.d/http-proxy.conf": `Environment="HTTP_PROXY=http://proxy:3128"`,
	}
	if controlPlane {
		want["/etc/kubernetes/audit-policy.yaml"] = "level: RequestResponse"
	}
	for path, content := range want {
		if !strings.Contains(files[path], content) {
			return fmt.Errorf("%s: file %s lacks %q: %q", role, path, content, files[path])
		}
	}
	if servers, _, _ := unstructured.NestedStringSlice(spec, "ntp", "servers"); fmt.Sprint(servers) != "[time.example.com]" {
		return fmt.Errorf("%s: ntp %v", role, spec["ntp"])
	}
	commands, _, _ := unstructured.NestedStringSlice(spec, "preKubeadmCommands")
	if !strings.Contains(strings.Join(commands, "\n"), "update-ca-certificates") {
		return fmt.Errorf("%s: preKubeadmCommands %q do not update the trust store", role, commands)
	}
	if controlPlane {
		args, _, _ := unstructured.NestedSlice(spec, "clusterConfiguration", "apiServer", "extraArgs")
		if !strings.Contains(fmt.Sprint(args), "map[name:audit-policy-file value:/etc/kubernetes/audit-policy.yaml]") {
			return fmt.Errorf("%s: API server arguments %v", role, args)
		}
	}
	return nil
}
