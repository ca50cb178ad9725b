//lint:file-ignore SA1019 Cluster API's managers serve the conversion webhooks of the deprecated API versions, so they register those versions as upstream's main.go does.

package components

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/version"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/ptr"
	addonsv1beta1 "sigs.k8s.io/cluster-api/api/addons/v1beta1"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
	bootstrapv1beta1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1beta1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta1"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/api/core/v1beta2/index"
	ipamv1alpha1 "sigs.k8s.io/cluster-api/api/ipam/v1alpha1"
	ipamv1beta1 "sigs.k8s.io/cluster-api/api/ipam/v1beta1"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	runtimev1alpha1 "sigs.k8s.io/cluster-api/api/runtime/v1alpha1"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	kubeadmbootstrapcontrollers "sigs.k8s.io/cluster-api/bootstrap/kubeadm/controllers"
	bootstrapwebhooks "sigs.k8s.io/cluster-api/bootstrap/kubeadm/webhooks"
	"sigs.k8s.io/cluster-api/controllers"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/controllers/crdmigrator"
	"sigs.k8s.io/cluster-api/controllers/remote"
	kubeadmcontrolplanecontrollers "sigs.k8s.io/cluster-api/controlplane/kubeadm/controllers"
	kcpwebhooks "sigs.k8s.io/cluster-api/controlplane/kubeadm/webhooks"
	"sigs.k8s.io/cluster-api/feature"
	"sigs.k8s.io/cluster-api/util/contract"
	"sigs.k8s.io/cluster-api/webhooks"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/slipway-dev/slipway/internal/local/podenv"
)

// The Cluster API components run Cluster API's own reconcilers and webhooks, set up as the
// upstream managers' main.go sets them up (cluster-api v1.13.4), with the flags their manifests
// pass. Run by the images of a Cluster API release, the same manifests run the upstream managers.

func clusterAPIController() Component {
	return Component{Name: "cluster-api-controller", Run: runClusterAPI}
}

func kubeadmBootstrapController() Component {
	return Component{Name: "kubeadm-bootstrap-controller", Run: runKubeadmBootstrap}
}

func kubeadmControlPlaneController() Component {
	return Component{Name: "kubeadm-control-plane-controller", Run: runKubeadmControlPlane}
}

// capiFlags are the flags Cluster API's managers share.
type capiFlags struct {
	fs                  *pflag.FlagSet
	leaderElect         *bool
	diagnosticsAddress  *string
	insecureDiagnostics *bool
	healthAddr          *string
	webhookPort         *int
	webhookCertDir      *string
	watchFilter         *string
	syncPeriod          *time.Duration
	// gates are the feature gates --feature-gates sets: Cluster API's, or a provider's own.
	gates featuregate.MutableFeatureGate
}

func newCAPIFlags(name string) capiFlags {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	return capiFlags{
		fs:                  fs,
		leaderElect:         fs.Bool("leader-elect", false, "use leader election"),
		diagnosticsAddress:  fs.String("diagnostics-address", ":8443", "address of the metrics endpoint"),
		insecureDiagnostics: fs.Bool("insecure-diagnostics", false, "serve metrics over HTTP"),
		healthAddr:          fs.String("health-addr", ":9440", "address of the health endpoint"),
		webhookPort:         fs.Int("webhook-port", 9443, "port of the webhook server"),
		webhookCertDir:      fs.String("webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs/", "directory of the webhook server's certificate"),
		watchFilter:         fs.String("watch-filter", "", "label value of cluster.x-k8s.io/watch-filter to reconcile; empty reconciles all"),
		syncPeriod:          fs.Duration("sync-period", 10*time.Minute, "resync period of the caches"),
		gates:               feature.MutableGates,
	}
}

// parse reads the arguments, the feature gates into f.gates.
func (f capiFlags) parse(args []string) error {
	gates := f.fs.String("feature-gates", "", "feature gates, name=bool,…")
	f.fs.Int("v", 0, "log verbosity")
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if *gates != "" {
		if err := f.gates.Set(*gates); err != nil {
			return fmt.Errorf("--feature-gates: %w", err)
		}
	}
	return nil
}

// newCAPIManager creates a manager in the current pod as Cluster API's managers do: a cache that
// holds only the Secrets of clusters, ConfigMaps and Secrets otherwise read live, the webhook
// server on the pod's address.
func newCAPIManager(f capiFlags, leaderElectionID string, s *runtime.Scheme, webhooks bool) (ctrl.Manager, error) {
	pod, cfg, err := podenv.CurrentConfig()
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 20, 30
	cfg.UserAgent = remote.DefaultClusterAPIUserAgent(leaderElectionID)
	req, _ := labels.NewRequirement(clusterv1.ClusterNameLabel, selection.Exists, nil)
	syncPeriod := *f.syncPeriod
	opts := ctrl.Options{
		Controller: config.Controller{
			UsePriorityQueue: ptr.To(feature.Gates.Enabled(feature.PriorityQueue)),
			CacheSyncTimeout: 5 * time.Minute,
		},
		Scheme:                        s,
		LeaderElection:                *f.leaderElect,
		LeaderElectionID:              leaderElectionID,
		LeaderElectionNamespace:       pod.Namespace(),
		LeaderElectionResourceLock:    resourcelock.LeasesResourceLock,
		LeaderElectionReleaseOnCancel: true,
		HealthProbeBindAddress:        pod.BindAddress(*f.healthAddr),
		Metrics:                       metricsserver.Options{BindAddress: pod.BindAddress(*f.diagnosticsAddress), SecureServing: !*f.insecureDiagnostics},
		Cache: cache.Options{
			SyncPeriod: &syncPeriod,
			ByObject: map[client.Object]cache.ByObject{
				&corev1.Secret{}: {
					Label: labels.NewSelector().Add(*req),
					// Upstream's managers also drop the data of every cached Secret but kubeconfigs;
					// the kubeadm managers read the cluster's certificate Secrets through this cache
					// (LookupCached) and then find no tls.crt, so the data is kept here.
					Transform: cache.TransformStripManagedFields(),
				},
			},
		},
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}}, Unstructured: true}},
	}
	if webhooks {
		opts.WebhookServer = webhook.NewServer(webhook.Options{Host: pod.IP, Port: *f.webhookPort, CertDir: pod.Path(*f.webhookCertDir)})
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("failed to create manager: %w", err)
	}
	check := healthz.Ping
	if webhooks {
		check = mgr.GetWebhookServer().StartedChecker()
	}
	if err := mgr.AddReadyzCheck("ready", check); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthy", check); err != nil {
		return nil, err
	}
	return mgr, nil
}

// newScheme returns a scheme with Kubernetes' kinds, CRDs and the given APIs.
func newScheme(addToScheme ...func(*runtime.Scheme) error) *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme}, addToScheme...) {
		if err := add(s); err != nil {
			// The schemes are built from static type lists; a failure is a programming error.
			panic(err)
		}
	}
	return s
}

// setupClusterCache is Cluster API's connection to workload clusters, with its managers' options.
func setupClusterCache(ctx context.Context, mgr ctrl.Manager, name, watchFilter string) (clustercache.ClusterCache, client.Client, error) {
	secretClient, err := client.New(mgr.GetConfig(), client.Options{HTTPClient: mgr.GetHTTPClient(), Cache: &client.CacheOptions{Reader: mgr.GetCache()}})
	if err != nil {
		return nil, nil, err
	}
	cc, err := clustercache.SetupWithManager(ctx, mgr, clustercache.Options{
		SecretClient: secretClient,
		Cache: clustercache.CacheOptions{
			Indexes:  []clustercache.CacheOptionsIndex{clustercache.NodeProviderIDIndex},
			ByObject: map[client.Object]cache.ByObject{&corev1.Node{}: {Transform: cache.TransformStripManagedFields()}},
		},
		Client: clustercache.ClientOptions{
			QPS: 20, Burst: 30, UserAgent: remote.DefaultClusterAPIUserAgent(name),
			Cache: clustercache.ClientCacheOptions{DisableFor: []client.Object{
				&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Pod{}, &storagev1.VolumeAttachment{}, &corev1.PersistentVolume{},
			}},
		},
		WatchFilterValue: watchFilter,
	}, controller.Options{MaxConcurrentReconciles: 10})
	if err != nil {
		return nil, nil, err
	}
	if err := setConnectionRetry(cc, connectionRetryInterval); err != nil {
		return nil, nil, err
	}
	return cc, secretClient, nil
}

// connectionRetryInterval is how long the cluster cache waits to connect again to a workload
// cluster it could not reach. Cluster API's 30 s is set for clusters that take minutes to boot;
// the cache first tries as soon as the infrastructure is provisioned, before any control-plane
// machine exists, and a local control plane answers about 13 s later, so every create sat idle
// for some 17 s waiting for the second try.
const connectionRetryInterval = 5 * time.Second

// setConnectionRetry sets the cache's retry interval through the setter its implementation has
// (not part of the ClusterCache interface), and fails when a Cluster API upgrade removed it.
func setConnectionRetry(cc clustercache.ClusterCache, interval time.Duration) error {
	s, ok := cc.(interface{ SetConnectionCreationRetryInterval(time.Duration) })
	if !ok {
		return fmt.Errorf("cluster API's ClusterCache (%T) no longer lets its connection retry interval be set", cc)
	}
	s.SetConnectionCreationRetryInterval(interval)
	return nil
}

// apiVersionGetter returns the newest apiVersion of a kind that meets the v1beta2 (else v1beta1)
// contract, read from its CRD's contract labels, as Cluster API's conversion webhooks need.
func apiVersionGetter(ctx context.Context, c client.Reader) func(schema.GroupKind) (string, error) {
	return func(gk schema.GroupKind) (string, error) {
		crd := &metav1.PartialObjectMetadata{}
		crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if err := c.Get(ctx, client.ObjectKey{Name: contract.CalculateCRDName(gk.Group, gk.Kind)}, crd); err != nil {
			return "", fmt.Errorf("failed to get the CRD of %s: %w", gk, err)
		}
		for _, contractVersion := range []string{"v1beta2", "v1beta1"} {
			supported := crd.GetLabels()[clusterv1.GroupVersion.Group+"/"+contractVersion]
			if supported == "" {
				continue
			}
			versions := strings.Split(supported, "_")
			sort.Slice(versions, func(i, j int) bool { return version.CompareKubeAwareVersionStrings(versions[i], versions[j]) < 0 })
			return schema.GroupVersion{Group: gk.Group, Version: versions[len(versions)-1]}.String(), nil
		}
		return "", fmt.Errorf("the CRD of %s has no Cluster API contract label", gk)
	}
}

func runClusterAPI(ctx context.Context, args []string) error {
	f := newCAPIFlags("cluster-api-controller")
	remoteConnectionGrace := f.fs.Duration("remote-connection-grace-period", 50*time.Second, "grace period before a workload cluster is reported unreachable")
	remoteConditionsGrace := f.fs.Duration("remote-conditions-grace-period", 5*time.Minute, "grace period before a Machine's node conditions are reported unknown")
	if err := f.parse(args); err != nil {
		return err
	}
	mgr, err := newCAPIManager(f, "controller-leader-election-capi", newScheme(
		storagev1.AddToScheme, clusterv1beta1.AddToScheme, clusterv1.AddToScheme, addonsv1beta1.AddToScheme, addonsv1.AddToScheme,
		runtimev1alpha1.AddToScheme, runtimev1.AddToScheme, ipamv1alpha1.AddToScheme, ipamv1beta1.AddToScheme, ipamv1.AddToScheme), true)
	if err != nil {
		return err
	}
	if err := index.AddDefaultIndexes(ctx, mgr); err != nil {
		return err
	}
	cc, _, err := setupClusterCache(ctx, mgr, "cluster-api-controller-manager", *f.watchFilter)
	if err != nil {
		return err
	}
	migrate := map[client.Object]crdmigrator.ByObjectConfig{
		&addonsv1.ClusterResourceSetBinding{}: {UseCache: true},
		&addonsv1.ClusterResourceSet{}:        {UseCache: true, UseStatusForStorageVersionMigration: true},
		&clusterv1.Cluster{}:                  {UseCache: true, UseStatusForStorageVersionMigration: true},
		&clusterv1.MachineDeployment{}:        {UseCache: true, UseStatusForStorageVersionMigration: true},
		&clusterv1.MachineDrainRule{}:         {UseCache: true},
		&clusterv1.MachineHealthCheck{}:       {UseCache: true, UseStatusForStorageVersionMigration: true},
		&clusterv1.Machine{}:                  {UseCache: true, UseStatusForStorageVersionMigration: true},
		&clusterv1.MachineSet{}:               {UseCache: true, UseStatusForStorageVersionMigration: true},
		&ipamv1.IPAddress{}:                   {UseCache: false},
		&ipamv1.IPAddressClaim{}:              {UseCache: false, UseStatusForStorageVersionMigration: true},
	}
	if feature.Gates.Enabled(feature.ClusterTopology) {
		migrate[&clusterv1.ClusterClass{}] = crdmigrator.ByObjectConfig{UseCache: true, UseStatusForStorageVersionMigration: true}
	}
	if feature.Gates.Enabled(feature.MachinePool) {
		migrate[&clusterv1.MachinePool{}] = crdmigrator.ByObjectConfig{UseCache: true, UseStatusForStorageVersionMigration: true}
	}
	filter := *f.watchFilter
	one := func(n int) controller.Options { return controller.Options{MaxConcurrentReconciles: n} }
	setups := []func() error{
		func() error {
			return (&crdmigrator.CRDMigrator{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Config: migrate}).SetupWithManager(ctx, mgr, one(1))
		},
		func() error {
			return (&controllers.ClusterReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), ClusterCache: cc, WatchFilterValue: filter,
				RemoteConnectionGracePeriod: *remoteConnectionGrace}).SetupWithManager(ctx, mgr, one(10))
		},
		func() error {
			return (&controllers.MachineReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), ClusterCache: cc, WatchFilterValue: filter,
				RemoteConditionsGracePeriod: *remoteConditionsGrace}).SetupWithManager(ctx, mgr, one(10))
		},
		func() error {
			return (&controllers.MachineSetReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), ClusterCache: cc, WatchFilterValue: filter,
				PreflightChecks: sets.New(clusterv1.MachineSetPreflightCheckAll)}).SetupWithManager(ctx, mgr, one(10))
		},
		func() error {
			return (&controllers.MachineDeploymentReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), WatchFilterValue: filter}).SetupWithManager(ctx, mgr, one(10))
		},
		func() error {
			return (&controllers.MachineHealthCheckReconciler{Client: mgr.GetClient(), ClusterCache: cc, WatchFilterValue: filter}).SetupWithManager(ctx, mgr, one(10))
		},
		func() error {
			return (&controllers.ClusterResourceSetBindingReconciler{Client: mgr.GetClient(), WatchFilterValue: filter}).SetupWithManager(ctx, mgr, one(10))
		},
	}
	if feature.Gates.Enabled(feature.ClusterTopology) {
		setups = append(setups,
			func() error {
				return (&controllers.ClusterClassReconciler{Client: mgr.GetClient(), WatchFilterValue: filter}).SetupWithManager(ctx, mgr, one(10))
			},
			func() error {
				return (&controllers.ClusterTopologyReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), ClusterCache: cc, WatchFilterValue: filter}).SetupWithManager(ctx, mgr, one(10))
			},
			func() error {
				return (&controllers.MachineDeploymentTopologyReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), WatchFilterValue: filter}).SetupWithManager(ctx, mgr, controller.Options{})
			},
			func() error {
				return (&controllers.MachineSetTopologyReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), WatchFilterValue: filter}).SetupWithManager(ctx, mgr, controller.Options{})
			},
		)
	}
	if feature.Gates.Enabled(feature.MachinePool) {
		setups = append(setups, func() error {
			return (&controllers.MachinePoolReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), ClusterCache: cc, WatchFilterValue: filter}).SetupWithManager(ctx, mgr, one(10))
		})
	}
	for _, setup := range setups {
		if err := setup(); err != nil {
			return err
		}
	}
	clusterv1beta1.SetAPIVersionGetter(apiVersionGetter(ctx, mgr.GetClient()))
	for _, w := range []interface{ SetupWebhookWithManager(ctrl.Manager) error }{
		&webhooks.ClusterClass{Client: mgr.GetClient()},
		&webhooks.Cluster{Client: mgr.GetClient(), ClusterCacheReader: cc},
		&webhooks.Machine{}, &webhooks.MachineSet{}, &webhooks.MachineDeployment{}, &webhooks.MachineDrainRule{}, &webhooks.MachinePool{},
		&webhooks.ClusterResourceSet{}, &webhooks.ClusterResourceSetBinding{}, &webhooks.MachineHealthCheck{}, &webhooks.ExtensionConfig{},
		&webhooks.IPAddress{Client: mgr.GetAPIReader()}, &webhooks.IPAddressClaim{},
	} {
		if err := w.SetupWebhookWithManager(mgr); err != nil {
			return err
		}
	}
	return mgr.Start(ctx)
}

func runKubeadmBootstrap(ctx context.Context, args []string) error {
	f := newCAPIFlags("kubeadm-bootstrap-controller")
	tokenTTL := f.fs.Duration("bootstrap-token-ttl", 15*time.Minute, "lifetime of the bootstrap tokens of joining machines")
	if err := f.parse(args); err != nil {
		return err
	}
	mgr, err := newCAPIManager(f, "kubeadm-bootstrap-manager-leader-election-capi", newScheme(clusterv1.AddToScheme, bootstrapv1beta1.AddToScheme, bootstrapv1.AddToScheme), true)
	if err != nil {
		return err
	}
	cc, secretClient, err := setupClusterCache(ctx, mgr, "cluster-api-kubeadm-bootstrap-manager", *f.watchFilter)
	if err != nil {
		return err
	}
	if err := (&crdmigrator.CRDMigrator{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Config: map[client.Object]crdmigrator.ByObjectConfig{
		&bootstrapv1.KubeadmConfig{}:         {UseCache: true, UseStatusForStorageVersionMigration: true},
		&bootstrapv1.KubeadmConfigTemplate{}: {UseCache: false},
	}}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 1}); err != nil {
		return err
	}
	if err := (&kubeadmbootstrapcontrollers.KubeadmConfigReconciler{
		Client: mgr.GetClient(), SecretCachingClient: secretClient, ClusterCache: cc, WatchFilterValue: *f.watchFilter, TokenTTL: *tokenTTL,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 10}); err != nil {
		return err
	}
	if err := (&bootstrapwebhooks.KubeadmConfig{}).SetupWebhookWithManager(mgr); err != nil {
		return err
	}
	if err := (&bootstrapwebhooks.KubeadmConfigTemplate{}).SetupWebhookWithManager(mgr); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

func runKubeadmControlPlane(ctx context.Context, args []string) error {
	f := newCAPIFlags("kubeadm-control-plane-controller")
	etcdDialTimeout := f.fs.Duration("etcd-dial-timeout-duration", 10*time.Second, "etcd dial timeout")
	etcdCallTimeout := f.fs.Duration("etcd-call-timeout-duration", 15*time.Second, "etcd call timeout")
	remoteConditionsGrace := f.fs.Duration("remote-conditions-grace-period", 5*time.Minute, "grace period before control-plane conditions are reported unknown")
	if err := f.parse(args); err != nil {
		return err
	}
	mgr, err := newCAPIManager(f, "kubeadm-control-plane-manager-leader-election-capi", newScheme(
		clusterv1.AddToScheme, controlplanev1beta1.AddToScheme, controlplanev1.AddToScheme, bootstrapv1.AddToScheme, runtimev1.AddToScheme), true)
	if err != nil {
		return err
	}
	cc, secretClient, err := setupClusterCache(ctx, mgr, "cluster-api-kubeadm-control-plane-manager", *f.watchFilter)
	if err != nil {
		return err
	}
	if err := (&crdmigrator.CRDMigrator{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Config: map[client.Object]crdmigrator.ByObjectConfig{
		&controlplanev1.KubeadmControlPlane{}:         {UseCache: true, UseStatusForStorageVersionMigration: true},
		&controlplanev1.KubeadmControlPlaneTemplate{}: {UseCache: false},
	}}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 1}); err != nil {
		return err
	}
	if err := (&kubeadmcontrolplanecontrollers.KubeadmControlPlaneReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), SecretCachingClient: secretClient, ClusterCache: cc, WatchFilterValue: *f.watchFilter,
		EtcdDialTimeout: *etcdDialTimeout, EtcdCallTimeout: *etcdCallTimeout, RemoteConditionsGracePeriod: *remoteConditionsGrace,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 10, ReconciliationTimeout: 3 * time.Minute}); err != nil {
		return err
	}
	controlplanev1beta1.SetAPIVersionGetter(apiVersionGetter(ctx, mgr.GetClient()))
	if err := (&kcpwebhooks.KubeadmControlPlane{}).SetupWebhookWithManager(mgr); err != nil {
		return err
	}
	if err := (&kcpwebhooks.ScaleValidator{Client: mgr.GetClient()}).SetupWebhookWithManager(mgr); err != nil {
		return err
	}
	if err := (&kcpwebhooks.KubeadmControlPlaneTemplate{}).SetupWebhookWithManager(mgr); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
