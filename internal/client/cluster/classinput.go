package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	tkrclient "github.com/slipway-dev/slipway/internal/client/tkr"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// TKG's refusals of a ClusterClass input file whose Cluster has no class.
const (
	errNoClass    = "input file contains Cluster resource which doesn't have ClusterClass specified. Passing Cluster resource without ClusterClass specification is not supported"
	errEmptyClass = "input cluster class file, attribute spec.topology.class has no value or incorrect value or not following correct naming convention"
)

// readObjects reads a file of Kubernetes objects, TKG 2.x's ClusterClass input (a Cluster, and
// the Secrets, *Configs and ClusterBootstrap it needs, as `cluster create --dry-run` and
// clusterconfigs/ write them); ok is false for a flat VARIABLE: value file.
func readObjects(path string) (objs []*unstructured.Unstructured, ok bool, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false, fmt.Errorf("--file (-f): %w", err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	// Until a document is an object, the file may be a flat one, whose reader says what is wrong
	// with it; after, a document that is not an object is this file's error.
	bad := func(i int, why string) ([]*unstructured.Unstructured, bool, error) {
		if len(objs) == 0 {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("%s: document %d %s: give each document apiVersion, kind and metadata.name", path, i+1, why)
	}
	for i := 0; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return bad(i, "cannot be read: "+err.Error())
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return bad(i, "is not YAML: "+err.Error())
		}
		var head struct{ APIVersion, Kind string }
		if string(bytes.TrimSpace(js)) == "null" {
			continue
		}
		if json.Unmarshal(js, &head) != nil || head.APIVersion == "" || head.Kind == "" {
			return bad(i, "is not a Kubernetes object")
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		objs = append(objs, u)
	}
	return objs, len(objs) > 0, nil
}

// createFromObjects creates a cluster from a ClusterClass input file with TKG's checks, lines
// and waits.
func createFromObjects(ctx context.Context, o CreateOptions, objs []*unstructured.Unstructured) error {
	p := o.Progress
	var cluster *unstructured.Unstructured
	for _, u := range objs {
		if u.GetKind() == "Cluster" && u.GroupVersionKind().Group == clusterv1.GroupVersion.Group {
			if cluster != nil {
				return fmt.Errorf("%s holds two Clusters, %s and %s: give one cluster per file", o.File, cluster.GetName(), u.GetName())
			}
			cluster = u
		}
	}
	if cluster == nil {
		return fmt.Errorf("%s holds Kubernetes objects but no Cluster (cluster.x-k8s.io): give a ClusterClass Cluster, or TKG's flat VARIABLE: value file", o.File)
	}
	if _, ok, _ := unstructured.NestedMap(cluster.Object, "spec", "topology"); !ok {
		return errors.New(errNoClass)
	}
	class, _, _ := unstructured.NestedString(cluster.Object, "spec", "topology", "classRef", "name")
	if class == "" {
		class, _, _ = unstructured.NestedString(cluster.Object, "spec", "topology", "class") // v1beta1
	}
	if class == "" {
		return errors.New(errEmptyClass)
	}
	if len(o.Set) > 0 {
		var set []string
		for v := range o.Set {
			set = append(set, v)
		}
		slices.Sort(set)
		return fmt.Errorf("the flags that set %s do not apply to a ClusterClass file: edit its Cluster instead (spec.topology), or give a flat configuration file",
			strings.Join(set, ", "))
	}
	if o.Name != "" && o.Name != cluster.GetName() {
		return fmt.Errorf("the cluster name %s differs from the Cluster's name %s in %s: drop the argument, or edit the file", o.Name, cluster.GetName(), o.File)
	}
	if cluster.GetNamespace() == "" {
		cluster.SetNamespace(corev1.NamespaceDefault)
	}
	for _, u := range objs {
		if u.GetNamespace() == "" && u.GetKind() != "Namespace" {
			u.SetNamespace(cluster.GetNamespace())
		}
	}
	if o.TKR != "" {
		chosen, err := tkrclient.Resolve(ctx, o.Client, o.TKR)
		if err != nil {
			return fmt.Errorf("invalid --tkr: %w", err)
		}
		if err := unstructured.SetNestedField(cluster.Object, chosen.Spec.Version, "spec", "topology", "version"); err != nil {
			return err
		}
		// A ClusterBootstrap of the file fills its add-ons from the release the Cluster runs.
		for _, u := range objs {
			if u.GetKind() == "ClusterBootstrap" && u.GetAnnotations()[runv1alpha3.AnnotationAddMissingFieldsFromTKR] != "" {
				a := u.GetAnnotations()
				a[runv1alpha3.AnnotationAddMissingFieldsFromTKR] = chosen.Name
				u.SetAnnotations(a)
			}
		}
	}
	key := client.ObjectKeyFromObject(cluster)
	if err := o.Client.Get(ctx, key, &clusterv1.Cluster{}); err == nil {
		return fmt.Errorf("cluster with name %s already exists, please specify another name", key.Name)
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to reach the management cluster: %w", err)
	}
	if o.CheckHost != nil && !o.DryRun {
		if err := checkHostOfClass(ctx, o, cluster, class); err != nil {
			return err
		}
	}
	// Everything the Cluster needs first, then the Cluster, then its ClusterBootstrap, whose
	// defaulting reads the Cluster's infrastructure.
	var ordered []client.Object
	for _, u := range objs {
		if u != cluster && u.GetKind() != "ClusterBootstrap" {
			ordered = append(ordered, u)
		}
	}
	ordered = append(ordered, cluster)
	for _, u := range objs {
		if u.GetKind() == "ClusterBootstrap" {
			ordered = append(ordered, u)
		}
	}
	if o.DryRun {
		data, err := Manifests(ordered...)
		if err != nil {
			return err
		}
		_, err = o.Out.Write(data)
		return err
	}
	if err := o.Client.Get(ctx, client.ObjectKey{Namespace: "kube-public", Name: "pinniped-info"}, &corev1.ConfigMap{}); apierrors.IsNotFound(err) {
		p.Infof("Warning: Pinniped configuration not found; Authentication via Pinniped will not be set up in this cluster. " +
			"If you wish to set up Pinniped after the cluster is created, please refer to the documentation.")
	}
	annotations := tkg.OperationAnnotations(tkg.OperationCreate, o.Now(), o.Timeout)
	all := cluster.GetAnnotations()
	if all == nil {
		all = map[string]string{}
	}
	maps.Copy(all, annotations)
	cluster.SetAnnotations(all)
	p.Infof("")
	return createAndWait(ctx, o, key, ordered)
}

// checkHostOfClass asks this host for the nodes of a cluster whose ClusterClass is the local
// provider's.
func checkHostOfClass(ctx context.Context, o CreateOptions, cluster *unstructured.Unstructured, class string) error {
	namespace, _, _ := unstructured.NestedString(cluster.Object, "spec", "topology", "classRef", "namespace")
	if namespace == "" {
		namespace = cluster.GetNamespace()
	}
	cc := &clusterv1.ClusterClass{}
	if err := o.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: class}, cc); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("the Cluster's ClusterClass %s/%s is not on the management cluster: use one `kubectl get clusterclass -A` lists", namespace, class)
		}
		return fmt.Errorf("failed to reach the management cluster: %w", err)
	}
	if cc.Spec.Infrastructure.TemplateRef.Kind != "LocalClusterTemplate" {
		return nil
	}
	controlPlanes, _, _ := unstructured.NestedInt64(cluster.Object, "spec", "topology", "controlPlane", "replicas")
	if controlPlanes == 0 {
		controlPlanes = 1
	}
	workers := int64(0)
	mds, _, _ := unstructured.NestedSlice(cluster.Object, "spec", "topology", "workers", "machineDeployments")
	for _, md := range mds {
		if m, ok := md.(map[string]any); ok {
			n, _, _ := unstructured.NestedInt64(m, "replicas")
			workers += n
		}
	}
	return checkLocalHost(o.CheckHost, o.Progress, int(controlPlanes), int(workers))
}
