package infrastructure

// RBAC the local-infrastructure-controller needs, generated into config/infrastructure-local/role.generated.yaml by `make generate`.

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=localclusters;localclusters/status;localmachines;localmachines/status;localclustertemplates;localmachinetemplates,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;clusters/status;machines;machines/status,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete
