package capabilities

import (
	"context"
	"fmt"
	"reflect"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runv1alpha1 "github.com/slipway-dev/slipway/api/run/v1alpha1"
)

// Resync is how often a Capability is answered again when nothing about it changed: what a
// cluster serves changes as packages are installed and removed.
const Resync = time.Minute

// tokenLifetime is how long the service account token of one evaluation lives.
const tokenLifetime = 10 * time.Minute

// ReasonQueriesNotAsked is a Capability whose queries could not be asked as its service
// account: the Event says why.
const ReasonQueriesNotAsked = "QueriesNotAsked"

// Reconciler answers Capabilities.
type Reconciler struct {
	Client client.Client
	// Config reaches the API server; queries use its address and CA with the service account's
	// token instead of its credentials.
	Config *rest.Config
	// Recorder records the Events users see; nil takes the manager's.
	Recorder events.EventRecorder
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("capabilities-controller")
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&runv1alpha1.Capability{}).
		Named("capability").
		Complete(r)
}

// +kubebuilder:rbac:groups=run.tanzu.vmware.com,resources=capabilities,verbs=get;list;watch
// +kubebuilder:rbac:groups=run.tanzu.vmware.com,resources=capabilities/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=serviceaccounts/token,verbs=create

// Reconcile evaluates every query of one Capability and writes the results when they changed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	capability := &runv1alpha1.Capability{}
	if err := r.Client.Get(ctx, req.NamespacedName, capability); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var results []runv1alpha1.Result
	q, err := r.querier(ctx, capability)
	if err != nil {
		// Every question gets the reason it could not be asked.
		results = failAll(capability.Spec.Queries, err)
	} else {
		results = q.evaluate(ctx, capability.Spec.Queries)
	}
	if !reflect.DeepEqual(capability.Status.Results, results) {
		patch := client.MergeFrom(capability.DeepCopy())
		capability.Status.Results = results
		if err := r.Client.Status().Patch(ctx, capability, patch); err != nil {
			return ctrl.Result{}, err
		}
		ctrl.LoggerFrom(ctx).Info("Capability answered", "queries", len(results))
		if err != nil {
			r.Recorder.Eventf(capability, nil, corev1.EventTypeWarning, ReasonQueriesNotAsked, "Query", "%v", err)
		}
	}
	return ctrl.Result{RequeueAfter: Resync}, nil
}

// querier returns a querier that acts as the Capability's service account.
func (r *Reconciler) querier(ctx context.Context, capability *runv1alpha1.Capability) (*querier, error) {
	sa := &corev1.ServiceAccount{}
	key := client.ObjectKey{Namespace: capability.Namespace, Name: capability.Spec.ServiceAccountName}
	if err := r.Client.Get(ctx, key, sa); err != nil {
		return nil, fmt.Errorf("spec.serviceAccountName: service account %s: %w", key, err)
	}
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(tokenLifetime.Seconds()))}}
	if err := r.Client.SubResource("token").Create(ctx, sa, request); err != nil {
		return nil, fmt.Errorf("spec.serviceAccountName: failed to get a token of service account %s: %w", key, err)
	}
	cfg := rest.AnonymousClientConfig(r.Config)
	cfg.BearerToken = request.Status.Token
	return newQuerier(cfg)
}

func failAll(queries []runv1alpha1.Query, err error) []runv1alpha1.Result {
	failed := func(name string) runv1alpha1.QueryResult {
		return runv1alpha1.QueryResult{Name: name, Error: true, ErrorDetail: err.Error()}
	}
	results := make([]runv1alpha1.Result, 0, len(queries))
	for _, query := range queries {
		result := runv1alpha1.Result{Name: query.Name}
		for _, q := range query.GroupVersionResources {
			result.GroupVersionResources = append(result.GroupVersionResources, failed(q.Name))
		}
		for _, q := range query.Objects {
			result.Objects = append(result.Objects, failed(q.Name))
		}
		for _, q := range query.PartialSchemas {
			result.PartialSchemas = append(result.PartialSchemas, failed(q.Name))
		}
		results = append(results, result)
	}
	return results
}
