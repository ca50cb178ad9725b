//lint:file-ignore SA1019 Cluster API's managers serve the conversion webhooks of the deprecated API versions, so they register those versions as upstream's main.go does.

package components

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/controllers/remote"
	"sigs.k8s.io/cluster-api/feature"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// The helpers below set up slipway's own Cluster API providers (the local infrastructure and
// in-cluster IPAM providers) as Cluster API's managers are set up (cluster-api v1.13.4), with
// the flags their manifests pass.

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
	cfg, err := ctrl.GetConfig()
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
		LeaderElectionNamespace:       podNamespace(),
		LeaderElectionResourceLock:    resourcelock.LeasesResourceLock,
		LeaderElectionReleaseOnCancel: true,
		HealthProbeBindAddress:        *f.healthAddr,
		Metrics:                       metricsserver.Options{BindAddress: *f.diagnosticsAddress, SecureServing: !*f.insecureDiagnostics},
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
		opts.WebhookServer = webhook.NewServer(webhook.Options{Port: *f.webhookPort, CertDir: *f.webhookCertDir})
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
