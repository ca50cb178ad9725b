package main

import (
	"fmt"
	"strings"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/client/clusterctl"
	"github.com/slipway-dev/slipway/internal/images"
)

// The images slipway ships. Each is named by the reference its manifests write (TKG's, upstream's
// or slipway's own); `make images` pushes it to REGISTRY/<that reference's repository path>:<tag>
// and the packages and the provider repository lock it there by digest.

// Sources of the binaries, and the modules they are built in.
const (
	slipwayModule         = "github.com/slipway-dev/slipway"
	capiModule            = "sigs.k8s.io/cluster-api"
	capvModule            = "sigs.k8s.io/cluster-api-provider-vsphere"
	capiVersion           = "v1.13.4"
	capvVersion           = "v1.16.1"
	metricsServerModule   = "sigs.k8s.io/metrics-server"
	localPathModule       = "github.com/rancher/local-path-provisioner"
	localPathVersion      = "v0.0.30"
	cpiModule             = "k8s.io/cloud-provider-vsphere"
	kappControllerModule  = "github.com/vmware-tanzu/carvel-kapp-controller"
	kappControllerVersion = "v0.50.0"
	certManagerModule     = "github.com/cert-manager/cert-manager"
	ipamModule            = "sigs.k8s.io/cluster-api-ipam-provider-in-cluster"
	ipamVersion           = "v1.1.0"
	// clusterAPIDir is the module under hack/images that builds Cluster API's and CAPV's mains.
	clusterAPIDir = "hack/images/cluster-api"
)

// binary is one static binary an image carries, as its entrypoint.
type binary struct {
	// name is the file under bin/images/bin.
	name string
	// file is the binary's path in the image, as upstream's image has it; /manager when empty.
	file string
	// dir is the module the binary is built in, relative to the source root.
	dir string
	// pkg is the main package.
	pkg string
	// source and version are the module the code comes from and its version: the image's OCI
	// source and version labels.
	source, version string
	// ldflags are -X flags that make the binary report its version.
	ldflags string
	// prebuilt, when set, is the binary `make assets` built (relative to the source root),
	// taken as it is instead of built here.
	prebuilt string
	// setuid makes the binary setuid (its owner is root).
	setuid bool
}

var (
	slipwayBinary = binary{name: "slipway", dir: ".", pkg: "./cmd/slipway", source: slipwayModule}
	capiBinaries  = map[string]binary{
		"cluster-api-controller":           capiBinary("cluster-api-controller", capiModule),
		"kubeadm-bootstrap-controller":     capiBinary("kubeadm-bootstrap-controller", capiModule+"/bootstrap/kubeadm"),
		"kubeadm-control-plane-controller": capiBinary("kubeadm-control-plane-controller", capiModule+"/controlplane/kubeadm"),
	}
	// etcdBinary is the etcd `make assets` built, where upstream's etcd image has it.
	etcdBinary = binary{name: "etcd-" + etcdVersion, file: "usr/local/bin/etcd", prebuilt: "bin/etcd/" + etcdVersion + "/etcd",
		source: etcdModule, version: etcdVersion}
	// etcdctlBinary is the etcdctl `make assets` built, which upstream's etcd image carries
	// beside etcd: `kubectl exec` into an etcd pod runs it, as on TKG's nodes.
	etcdctlBinary = binary{name: "etcdctl-" + etcdVersion, file: "usr/local/bin/etcdctl", prebuilt: "bin/etcd/" + etcdVersion + "/etcdctl",
		source: "go.etcd.io/etcd/etcdctl/v3", version: etcdVersion}
	// ipamBinary is Cluster API's in-cluster IPAM provider (TKG's caip-in-cluster), built from
	// its own module at its own dependency versions (Cluster API v1.11).
	ipamBinary = binary{name: "cluster-api-ipam-in-cluster-controller-" + ipamVersion, dir: "hack/images/ipam-in-cluster", pkg: ipamModule,
		source: ipamModule, version: ipamVersion, ldflags: versionFlags(ipamModule+"/version", ipamVersion, "1", "1")}
	capvBinary = binary{name: "cluster-api-vsphere-controller", dir: clusterAPIDir, pkg: capvModule, source: capvModule, version: capvVersion,
		ldflags: versionFlags(capvModule+"/pkg/version", capvVersion, "1", "16")}
)

// metricsServer is metrics-server at version, built in hack/images/metrics-server-<minor>.
func metricsServer(version string) binary {
	minor := version[:strings.LastIndex(version, ".")]
	return binary{name: "metrics-server-" + version, file: "metrics-server", dir: "hack/images/metrics-server-" + minor,
		pkg: metricsServerModule + "/cmd/metrics-server", source: metricsServerModule, version: version,
		ldflags: versionFlags("k8s.io/client-go/pkg/version", version, "0", strings.Split(version, ".")[1])}
}

// cloudProviderVSphere is the vSphere cloud controller manager at version, built in
// hack/images/cloud-provider-vsphere-<minor>, at the path of upstream's image.
func cloudProviderVSphere(version string) binary {
	minor := version[:strings.LastIndex(version, ".")]
	return binary{name: "vsphere-cloud-controller-manager-" + version, file: "bin/vsphere-cloud-controller-manager",
		dir: "hack/images/cloud-provider-vsphere-" + minor, pkg: cpiModule + "/cmd/vsphere-cloud-controller-manager",
		source: cpiModule, version: version, ldflags: "-X main.version=" + version}
}

// kappControllerRef is TKG's name of upstream's kapp-controller image.
const kappControllerRef = tkgRepository + "kapp-controller:" + kappControllerVersion + "_vmware.1"

// kappControllerCABundle is the CA bundle kapp-controller rewrites with its configuration's caCerts.
const kappControllerCABundle = "/etc/pki/tls/certs/ca-bundle.crt"

// kappControllerUID is the user upstream's kapp-controller image runs as, in the root group.
const kappControllerUID = 1000

// kappControllerImage is upstream's kapp-controller at ref, as its release image is: the
// controller at /kapp-controller with the Carvel command lines it executes beside it (kapp, kbld,
// vendir with imgpkg linked in, ytt; not helm, sops, cue or git), user 1000 in the root group, and
// a CA bundle at /etc/pki/tls/certs/ca-bundle.crt in a directory that group may write, where its
// configuration's caCerts are added to a copy of the original (.orig). Debian's sh, sed, cp, rm and
// chmod are there for the init container its release adds when it is given the cluster's DNS
// address (coreDNSIP), which rewrites a copy of /etc/resolv.conf as upstream's image allows.
func kappControllerImage(ref string) spec {
	tool := func(name, version, versionPkg string) binary {
		module := "carvel.dev/" + name
		return binary{name: name + "-" + version, file: name, dir: "hack/images/carvel", pkg: module + "/cmd/" + name, source: module,
			version: version, ldflags: "-X " + module + versionPkg + ".Version=" + strings.TrimPrefix(version, "v")}
	}
	users := passwd(fmt.Sprintf("kapp-controller:x:%d:0::/home/kapp-controller:/usr/sbin/nologin\n", kappControllerUID))
	return spec{ref: ref, user: fmt.Sprintf("%d:0", kappControllerUID), host: []string{"/bin/sh", "/bin/sed", "/bin/cp", "/bin/rm", "/bin/chmod"},
		bin: binary{name: "kapp-controller-" + kappControllerVersion, file: "kapp-controller", dir: "hack/images/kapp-controller",
			pkg: kappControllerModule + "/cmd/controller", source: kappControllerModule, version: kappControllerVersion,
			ldflags: "-X main.Version=" + kappControllerVersion},
		tools: []binary{tool("kapp", "v0.63.3", "/pkg/kapp/version"), tool("kbld", "v0.46.0", "/pkg/kbld/version"),
			tool("vendir", "v0.44.0", "/pkg/vendir/version"), tool("ytt", "v0.48.0", "/pkg/version")},
		files: []tarFile{
			{name: "etc/", mode: 0o755, dir: true},
			{name: "etc/passwd", mode: 0o644, data: []byte(users)},
			{name: "etc/pki/", mode: 0o755, dir: true},
			{name: "etc/pki/tls/", mode: 0o755, dir: true},
			{name: "etc/pki/tls/certs/", mode: 0o775, dir: true},
			{name: kappControllerCABundle[1:], mode: 0o664, path: caBundle},
			{name: kappControllerCABundle[1:] + ".orig", mode: 0o644, path: caBundle},
			{name: "home/kapp-controller/", mode: 0o775, dir: true},
		},
		title: "kapp-controller " + kappControllerVersion + " with kapp, kbld, vendir and ytt", help: "-packaging-global-namespace"}
}

// certManagerImages are upstream's cert-manager images as its release builds them
// (hack/containers): each binary at /app/cmd/NAME/NAME, run as user 1000, reporting its version.
// The provider repository's cert-manager (its release manifest) runs them: `clusterctl init`
// installs it, at the version hack/images/cert-manager/go.mod requires (the image test reads it
// back from each binary).
func certManagerImages() []spec {
	var images []spec
	for _, name := range []string{"controller", "webhook", "cainjector"} {
		images = append(images, spec{ref: certManagerRef(name), user: "1000",
			bin: binary{name: "cert-manager-" + name + "-" + clusterctl.CertManagerVersion, file: "app/cmd/" + name + "/" + name, dir: "hack/images/cert-manager",
				pkg: certManagerModule + "/cmd/" + name, source: certManagerModule, version: clusterctl.CertManagerVersion,
				ldflags: "-X " + certManagerModule + "/pkg/util.AppVersion=" + clusterctl.CertManagerVersion},
			title: "cert-manager " + name + " " + clusterctl.CertManagerVersion, help: "--kubeconfig"})
	}
	return images
}

// certManagerRef is upstream's name of cert-manager's image of a component.
func certManagerRef(name string) string {
	return "quay.io/jetstack/cert-manager-" + name + ":" + clusterctl.CertManagerVersion
}

func capiBinary(name, pkg string) binary {
	return binary{name: name, dir: clusterAPIDir, pkg: pkg, source: capiModule, version: capiVersion,
		ldflags: versionFlags(capiModule+"/version", capiVersion, "1", "13")}
}

// versionFlags sets the variables Cluster API's and CAPV's version packages report, as their
// release builds set them.
func versionFlags(pkg, version, major, minor string) string {
	return "-X " + pkg + ".gitVersion=" + version + " -X " + pkg + ".gitMajor=" + major + " -X " + pkg + ".gitMinor=" + minor +
		" -X " + pkg + ".gitTreeState=clean -X " + pkg + ".buildDate=1970-01-01T00:00:00Z"
}

// spec is one image.
type spec struct {
	// ref is the reference the manifests write.
	ref string
	bin binary
	// component is the slipway component the image runs (slipway's images only).
	component string
	// title says what the image is, for its OCI title label.
	title string
	// help is what the entrypoint's --help prints among its usage, for the test that runs it.
	help string
	// tools are more binaries the image carries beside its entrypoint, each in a layer of its
	// own, as kapp-controller's carries the Carvel command lines it runs.
	tools []binary
	// user runs the image as this uid:gid instead of the non-root user (nonRoot).
	user string
	// files are more entries the image carries, in a layer of their own.
	files []tarFile
	// simulated marks an honest stand-in for an image that cannot be built here.
	simulated bool
	// root runs the image as root, as Kubernetes' own images run.
	root bool
	// host are files of this host's Debian packages the image carries, with the libraries they
	// need: a layer beneath the binary's.
	host []string
	// cmd is the image's default arguments (its Cmd).
	cmd []string
	// bare leaves the image without an entrypoint, so that cmd is the command, as busybox's.
	bare bool
}

// slipwayImage is one of slipway's components, run from slipway's binary.
func slipwayImage(ref, component, title string) spec {
	return spec{ref: ref, bin: slipwayBinary, component: component, title: title}
}

// standIn is an image that cannot be built on this host: slipway's binary runs its stand-in,
// which says in its log what it stands in for.
func standIn(ref, why string) spec {
	return spec{ref: ref, bin: slipwayBinary, component: "stand-in", title: "simulated stand-in for " + ref + ": " + why, simulated: true}
}

// specs lists every image a package, a TKR or the provider repository names.
func specs() []spec {
	const slipway = "ghcr.io/slipway-dev/"
	const tkg = "projects.registry.vmware.com/tkg/"
	all := []spec{
		slipwayImage(slipway+"addons-controller:v0.1.0", "tanzu-addons-manager", "TKG addons manager"),
		slipwayImage(slipway+"capabilities-controller-manager:v0.1.0", "tanzu-capabilities", "TKG capabilities controller"),
		slipwayImage(slipway+"featuregates-controller-manager:v0.1.0", "tanzu-featuregates", "TKG featuregates controller"),
		slipwayImage(slipway+"object-propagation-controller:v0.1.0", "object-propagation-controller", "TKG object propagation controller"),
		slipwayImage(slipway+"tanzu-auth-controller-manager:v0.1.0", "tanzu-auth", "TKG tanzu-auth controller"),
		slipwayImage(slipway+"tkr-conversion-webhook:v0.1.0", "tkr-conversion-webhook", "TKR conversion webhook"),
		slipwayImage(slipway+"tkr-resolver-cluster-webhook:v0.1.0", "tkr-resolver-cluster-webhook", "TKR resolver webhook"),
		slipwayImage(slipway+"tkr-source-controller:v0.1.0", "tkr-source-controller", "TKR source controller"),
		slipwayImage(slipway+"tkr-status-controller:v0.1.0", "tkr-status-controller", "TKR status controller"),
		slipwayImage(slipway+"tkr-vsphere-resolver-webhook:v0.1.0", "tkr-vsphere-resolver-webhook", "TKR vSphere resolver webhook"),
		slipwayImage(slipway+"capl-controller:v0.1.0", "local-infrastructure-controller", "Cluster API local infrastructure provider"),
		{ref: slipway + "local-pod-network:v0.1.0", bin: slipwayBinary, component: "local-pod-network", root: true,
			host: append([]string{"/usr/bin/ip"}, iptablesFiles...), title: "the local runtime's pod network, with Debian's ip and iptables"},
		// Upstream's kapp-controller, which the kapp-controller package deploys on every cluster.
		// v0.50.1, which TKG's newer releases name, is not built: the Go module proxy refuses that
		// version (403, measured 2026-11-28), so both of slipway's releases name 0.50.0.
		kappControllerImage(kappControllerRef),
	}
	all = append(all, certManagerImages()...)
	for _, name := range []string{"cluster-api-controller", "kubeadm-bootstrap-controller", "kubeadm-control-plane-controller"} {
		all = append(all, spec{ref: "registry.k8s.io/cluster-api/" + name + ":" + capiVersion, bin: capiBinaries[name],
			title: "Cluster API " + name, help: "--leader-elect"})
	}
	all = append(all, spec{ref: "registry.k8s.io/capi-vsphere/cluster-api-vsphere-controller:" + capvVersion, bin: capvBinary,
		title: "Cluster API Provider vSphere", help: "--leader-elect"})
	all = append(all, spec{ref: "registry.k8s.io/capi-ipam-ic/cluster-api-ipam-in-cluster-controller:" + ipamVersion, bin: ipamBinary,
		title: "Cluster API in-cluster IPAM provider " + ipamVersion, help: "--leader-elect"})
	// Add-on workloads built from upstream.
	for _, v := range []string{"v0.6.4", "v0.7.2"} {
		all = append(all, spec{ref: tkg + "metrics-server:" + v + "_vmware.1", bin: metricsServer(v), title: "metrics-server " + v,
			help: "--kubelet-preferred-address-types"})
	}
	// The provisioner of the default StorageClass on real nodes, as kind installs it. It is also
	// its own helper pod's image: Debian's sh, mkdir and rm run the setup and teardown scripts
	// that make and remove a volume's directory on the node.
	all = append(all, spec{ref: assets.LocalPathProvisionerImage, root: true, host: []string{"/bin/sh", "/bin/mkdir", "/bin/rm"},
		bin: binary{name: "local-path-provisioner-" + localPathVersion, file: "usr/bin/local-path-provisioner",
			dir: "hack/images/local-path-provisioner", pkg: localPathModule, source: localPathModule, version: localPathVersion,
			ldflags: "-X main.VERSION=" + localPathVersion},
		title: "Rancher's local-path-provisioner " + localPathVersion + ", with Debian's sh, mkdir and rm for its helper pods",
		help:  "Local Path Provisioner"})
	for _, v := range []string{"v1.26.2", "v1.27.0"} {
		all = append(all, spec{ref: tkg + "ccm/manager:" + v + "_vmware.1", bin: cloudProviderVSphere(v),
			title: "vSphere cloud controller manager " + v, help: "--cloud-config"})
	}
	for _, s := range images.StandIns {
		all = append(all, standIn(s.Ref, s.Why))
	}
	return append(all, kubernetesImages()...)
}

// Kubernetes' own images, which kubeadm runs on a node: the control plane, kube-proxy (with
// Debian's iptables, as upstream's image carries its distribution's), etcd, CoreDNS and pause,
// named as TKG names them (the TKRs' imageRepository; the tag is the version with "+" replaced
// by "_", as kubeadm writes it).
const tkgRepository = assets.ImageRepository + "/"

// corednsVersion is the upstream version of a release's CoreDNS tag.
func corednsVersion(r assets.Release) string {
	return strings.TrimSuffix(r.CoreDNSTag, "_vmware.1")
}

const corednsModule = "github.com/coredns/coredns"

// coreDNS is CoreDNS at version, built in hack/images/coredns-<version> at the path of
// upstream's image.
func coreDNS(version string) binary {
	return binary{name: "coredns-" + version, file: "coredns", dir: "hack/images/coredns-" + version, pkg: corednsModule,
		source: corednsModule, version: version}
}

const (
	kubernetesModule = "k8s.io/kubernetes"
	etcdModule       = "go.etcd.io/etcd/server/v3"
	etcdVersion      = "v3.6.5"
)

func kubernetesImages() []spec {
	var images []spec
	for _, r := range assets.Releases {
		tag := r.Version + "_vmware.1"
		for _, cmd := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
			images = append(images, spec{ref: tkgRepository + cmd + ":" + tag, root: true,
				bin: binary{name: cmd + "-" + r.Version, file: "usr/local/bin/" + cmd, prebuilt: "bin/k8s/" + r.Version + "/" + cmd,
					source: kubernetesModule, version: r.Version},
				title: cmd + " " + r.Version, help: "--help"})
		}
		images = append(images, spec{ref: tkgRepository + "kube-proxy:" + tag, root: true, host: iptablesFiles,
			bin: binary{name: "kube-proxy-" + r.Version, file: "usr/local/bin/kube-proxy", prebuilt: "bin/k8s/" + r.Version + "/kube-proxy",
				source: kubernetesModule, version: r.Version},
			title: "kube-proxy " + r.Version + " with Debian's iptables and conntrack", help: "--help"})
		images = append(images, spec{ref: tkgRepository + "coredns:" + r.CoreDNSTag, root: true, bin: coreDNS(corednsVersion(r)),
			title: "CoreDNS " + corednsVersion(r) + " (as root, where upstream's image gives its binary the capability to bind port 53)",
			help:  "-conf"})
		images = append(images, spec{ref: tkgRepository + "etcd:" + r.EtcdTag, root: true,
			bin: etcdBinary, tools: []binary{etcdctlBinary}, title: "etcd " + etcdVersion + " with etcdctl", help: "--help"})
		images = append(images, spec{ref: tkgRepository + "pause:" + r.PauseTag, root: true,
			bin:   binary{name: "pause", file: "pause", dir: ".", pkg: "./hack/images/pause", source: slipwayModule},
			title: "pause, the pod sandbox (slipway's, as Kubernetes' build/pause)", help: "holds a pod's namespaces"})
	}
	return images
}
