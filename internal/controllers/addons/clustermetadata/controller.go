package clustermetadata

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/util/annotations"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/addons/configs"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Reasons of the Events recorded on a Cluster: its metadata written or changed, or refused.
const (
	ReasonPublished     = "ClusterMetadataPublished"
	ReasonPublishFailed = "ClusterMetadataPublishFailed"
)

// DefaultResync is how often a workload cluster's metadata is written again, to follow a
// management cluster upgrade (which changes its BOM) and to mend a deleted ConfigMap.
const DefaultResync = 10 * time.Minute

// Reconciler publishes the metadata of every workload cluster labelled with a TKR in the
// workload cluster, as TKG's ClusterMetadata controller does: its type, plan, provider, and the
// TKG version and BOM of the management cluster, read from the management cluster's own
// tkg-metadata (which the CLI writes).
type Reconciler struct {
	Client client.Client
	// ClusterCache is Cluster API's connection to the workload clusters.
	ClusterCache clustercache.ClusterCache
	// Recorder records the Events users see; nil takes the manager's.
	Recorder events.EventRecorder
	// Resync is how often the metadata is written again; zero is DefaultResync.
	Resync time.Duration
	// ReadTTL is how long one read of the management cluster's metadata serves every workload
	// cluster's pass, so that a pass over N clusters reads its two ConfigMaps once, not N times;
	// zero is DefaultReadTTL.
	ReadTTL time.Duration

	// apiReader reads the management cluster's two ConfigMaps, which the manager does not cache.
	apiReader client.Reader
	// read is the last read of them, which the passes of the next ReadTTL share.
	read struct {
		sync.Mutex
		at  time.Time
		own *Metadata
		bom []byte
	}
}

// DefaultReadTTL is how long a read of the management cluster's metadata is used; a management
// cluster upgrade reaches the workload clusters at their first resync after it.
const DefaultReadTTL = 30 * time.Second

// SetupWithManager registers the controller. A Cluster is looked at when it changes, when the
// cluster cache connects to it, and every Resync.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.ClusterCache == nil {
		return errors.New("the cluster metadata controller needs a ClusterCache")
	}
	if r.Resync == 0 {
		r.Resync = DefaultResync
	}
	if r.ReadTTL == 0 {
		r.ReadTTL = DefaultReadTTL
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("clustermetadata-controller")
	}
	r.apiReader = mgr.GetAPIReader()
	workload := predicate.NewPredicateFuncs(func(o client.Object) bool {
		_, hasTKR := o.GetLabels()[runv1alpha3.LabelTKR]
		_, management := o.GetLabels()[tkg.LabelManagementCluster]
		return hasTKR && !management
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("clustermetadata").
		For(&clusterv1.Cluster{}, builder.WithPredicates(workload)).
		WatchesRawSource(r.ClusterCache.GetClusterSource("clustermetadata", func(_ context.Context, o client.Object) []ctrl.Request {
			return []ctrl.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
		})).
		Complete(r)
}

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile writes one workload cluster's metadata into it once its control plane is up.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	_, management := cluster.Labels[tkg.LabelManagementCluster]
	if management || cluster.Labels[runv1alpha3.LabelTKR] == "" || !cluster.DeletionTimestamp.IsZero() ||
		annotations.IsPaused(cluster, cluster) || !ptr.Deref(cluster.Status.Initialization.ControlPlaneInitialized, false) {
		return ctrl.Result{}, nil
	}
	own, bom, err := r.managementMetadata(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	if own == nil {
		// A management cluster the CLI did not make has no metadata to hand down yet.
		ctrl.LoggerFrom(ctx).Info("The management cluster has no tkg-metadata yet: the workload cluster's waits for it",
			"ConfigMap", klog.KRef(Namespace, ConfigMap))
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	}
	remote, err := r.ClusterCache.GetClient(ctx, client.ObjectKeyFromObject(cluster))
	if errors.Is(err, clustercache.ErrClusterNotConnected) {
		// The cluster source brings the Cluster back once it connects.
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	md := Of(cluster, own.Cluster.TKGVersion)
	changed, err := Publish(ctx, remote, md, bom)
	if err != nil {
		r.Recorder.Eventf(cluster, nil, corev1.EventTypeWarning, ReasonPublishFailed, "Publish", "Failed to write %s/%s in the cluster: %v", Namespace, ConfigMap, err)
		return ctrl.Result{}, fmt.Errorf("failed to publish the metadata of cluster %s in it: %w", klog.KObj(cluster), err)
	}
	if changed {
		r.Recorder.Eventf(cluster, nil, corev1.EventTypeNormal, ReasonPublished, "Publish",
			"Wrote %s/%s (TKG %s) and %s/%s in the cluster", Namespace, ConfigMap, md.Cluster.TKGVersion, Namespace, BOMConfigMap)
	}
	return ctrl.Result{RequeueAfter: r.Resync}, nil
}

// managementMetadata returns the management cluster's tkg-metadata and the BOM it names, read
// at most ReadTTL ago; both are nil when the management cluster has no metadata.
func (r *Reconciler) managementMetadata(ctx context.Context) (*Metadata, []byte, error) {
	r.read.Lock()
	defer r.read.Unlock()
	if r.read.own != nil && time.Since(r.read.at) < r.ReadTTL {
		return r.read.own, r.read.bom, nil
	}
	own, bom, err := r.readManagementMetadata(ctx)
	if err != nil || own == nil {
		return own, bom, err
	}
	r.read.at, r.read.own, r.read.bom = time.Now(), own, bom
	return own, bom, nil
}

// readManagementMetadata reads the management cluster's tkg-metadata and the BOM it names.
func (r *Reconciler) readManagementMetadata(ctx context.Context) (*Metadata, []byte, error) {
	cm := &corev1.ConfigMap{}
	if err := r.apiReader.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: ConfigMap}, cm); apierrors.IsNotFound(err) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	own, err := Parse(cm.Data[MetadataKey])
	if err != nil {
		return nil, nil, fmt.Errorf("the management cluster's %s: %w", klog.KRef(Namespace, ConfigMap), err)
	}
	if own.BOM.ConfigMapRef.Name == "" {
		return nil, nil, fmt.Errorf("the management cluster's %s names no BOM (bom.configmapRef.name): `slipway management-cluster upgrade` writes it again", klog.KRef(Namespace, ConfigMap))
	}
	key := client.ObjectKey{Namespace: Namespace, Name: own.BOM.ConfigMapRef.Name}
	if err := r.apiReader.Get(ctx, key, cm); err != nil {
		return nil, nil, fmt.Errorf("the BOM the management cluster's %s names: %w", ConfigMap, err)
	}
	bom, ok := cm.Data[BOMKey]
	if !ok {
		return nil, nil, fmt.Errorf("ConfigMap %s holds no %s: `slipway management-cluster upgrade` writes it again", klog.KObj(cm), BOMKey)
	}
	return own, []byte(bom), nil
}

// Of is the metadata of a workload cluster of a management cluster of TKG version tkgVersion: its
// plan is TKG's name of the ClusterClass plan (devcc is dev, prodcc is prod; none is dev, as in
// TKG), its edition the Cluster's annotation (tkg when none).
func Of(cluster *clusterv1.Cluster, tkgVersion string) *Metadata {
	md := &Metadata{}
	md.Cluster.Name, md.Cluster.Type = cluster.Name, TypeWorkload
	_, management := cluster.Labels[tkg.LabelManagementCluster]
	if management {
		md.Cluster.Type = TypeManagement
	}
	switch plan := cluster.Annotations[tkg.AnnotationPlan]; plan {
	case "", "devcc":
		md.Cluster.Plan = "dev"
	case "prodcc":
		md.Cluster.Plan = "prod"
	default:
		md.Cluster.Plan = plan
	}
	md.Cluster.KubernetesProvider, md.Cluster.TKGVersion = KubernetesProvider, tkgVersion
	md.Cluster.Edition = "tkg"
	if edition := cluster.Annotations[tkg.AnnotationEdition]; edition != "" {
		md.Cluster.Edition = edition
	}
	md.Cluster.Infrastructure.Provider = configs.InfraProvider(cluster)
	md.Cluster.IsClusterClassBased = cluster.Spec.Topology.IsDefined()
	md.BOM.ConfigMapRef.Name = BOMConfigMap
	return md
}
