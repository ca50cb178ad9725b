package e2e

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/proc"
)

// checkNothingLeft checks that within 30 s of a workload cluster's deletion nothing of it is
// left on its management cluster (its Cluster, Machines, ClusterBootstrap, the PackageInstalls,
// Apps and Secrets of its add-ons) or on the host (processes, its local cluster's directory),
// and that no log of the management cluster's nodes shows a panic.
func checkNothingLeft(t *testing.T, c client.Client, store cluster.Store, managementCluster, namespace, name string) {
	t.Helper()
	ctx := t.Context()
	dirs, err := store.Dirs(name)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []string{"cluster.x-k8s.io/v1beta2 Cluster", "cluster.x-k8s.io/v1beta2 Machine", "run.tanzu.vmware.com/v1alpha3 ClusterBootstrap",
		"packaging.carvel.dev/v1alpha1 PackageInstall", "kappctrl.k14s.io/v1alpha1 App", "v1 Secret"}
	eventually(t, 30*time.Second, "nothing of deleted workload cluster "+name+" left", func() error {
		var left []string
		for _, gvk := range kinds {
			apiVersion, kind, _ := strings.Cut(gvk, " ")
			list := &unstructured.UnstructuredList{}
			list.SetAPIVersion(apiVersion)
			list.SetKind(kind + "List")
			// The add-ons of a workload cluster live in its namespace and in the system namespace.
			if err := c.List(ctx, list); err != nil {
				return fmt.Errorf("list %s: %w", kind, err)
			}
			for _, o := range list.Items {
				if o.GetName() == name || strings.HasPrefix(o.GetName(), name+"-") || o.GetLabels()["cluster.x-k8s.io/cluster-name"] == name {
					left = append(left, fmt.Sprintf("%s %s/%s", kind, o.GetNamespace(), o.GetName()))
				}
			}
		}
		if pids := proc.Using(dirs.Root); len(pids) > 0 {
			left = append(left, fmt.Sprintf("processes %v", pids))
		}
		if _, err := os.Stat(dirs.Root); err == nil {
			left = append(left, "directory "+dirs.Root)
		}
		if len(left) > 0 {
			return errors.New(strings.Join(left, ", "))
		}
		return nil
	})
	mcDirs, err := store.Dirs(managementCluster)
	if err != nil {
		t.Fatal(err)
	}
	if panics := panicsIn(t, mcDirs.Root); len(panics) > 0 {
		t.Errorf("the management cluster's logs show panics:\n%s", strings.Join(panics, "\n"))
	}
}

// panic is how a Go program's panic, or one that controller-runtime recovered, begins in a log.
var panicLine = regexp.MustCompile(`(?m)^panic: .*$|Observed a panic.*$`)

// panicsIn returns the panics written to any log under dir, each with its file.
func panicsIn(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".log") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		for _, m := range panicLine.FindAllString(string(data), 3) {
			found = append(found, path+": "+m)
		}
		return nil
	})
	return found
}
