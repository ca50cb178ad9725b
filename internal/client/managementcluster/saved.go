package managementcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/slipway-dev/slipway/internal/kubeconfig"
)

// SavedKubeconfig is where slipway's home keeps the admin kubeconfig of a management cluster it
// made.
func SavedKubeconfig(home, name string) string {
	return filepath.Join(home, "management", name+".kubeconfig")
}

// Names returns the management clusters created from this home whose kubeconfig is kept,
// sorted.
func Names(home string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(home, "management", "*.kubeconfig"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, m := range matches {
		names = append(names, strings.TrimSuffix(filepath.Base(m), ".kubeconfig"))
	}
	slices.Sort(names)
	return names, nil
}

// Current returns the management cluster commands act on when none is named, as the tanzu CLI's
// current server: the one created from this home; of several, the one whose admin context is
// the current context of the kubeconfig at kubeconfigPath (kubectl's file when empty), else
// the one created last, which guessed says. It returns "" when this home created none.
func Current(home, kubeconfigPath string) (name string, guessed bool, err error) {
	names, err := Names(home)
	if err != nil || len(names) <= 1 {
		if len(names) == 1 {
			return names[0], false, err
		}
		return "", false, err
	}
	if kubeconfigPath == "" {
		kubeconfigPath = kubeconfig.DefaultPath()
	}
	if cfg, err := clientcmd.LoadFromFile(kubeconfigPath); err == nil {
		for _, n := range names {
			if cfg.CurrentContext == ContextName(n) {
				return n, false, nil
			}
		}
	}
	last, lastTime := "", time.Time{}
	for _, n := range names {
		info, err := os.Stat(SavedKubeconfig(home, n))
		if err != nil {
			return "", false, err
		}
		if info.ModTime().After(lastTime) {
			last, lastTime = n, info.ModTime()
		}
	}
	return last, true, nil
}

// knownContext refuses a management cluster whose admin context the kubeconfig at path lacks,
// naming those this home created (a misspelt name) or the command that writes the context (one
// this home created, its context since removed). A kubeconfig that cannot be read is left to
// the client that reads it next.
func knownContext(home, path, name string) error {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil
	}
	if _, ok := cfg.Contexts[ContextName(name)]; ok {
		return nil
	}
	names, err := Names(home)
	if err != nil {
		return err
	}
	if slices.Contains(names, name) {
		return fmt.Errorf("management cluster %s has no context %s in the kubeconfig %s: `slipway management-cluster kubeconfig get %s --admin` writes it",
			name, ContextName(name), path, name)
	}
	made := "this host created none"
	if len(names) > 0 {
		made = "the management clusters this host created: " + strings.Join(names, ", ")
	}
	return fmt.Errorf("no management cluster %s: the kubeconfig %s has no context %s; %s", name, path, ContextName(name), made)
}

// GuessedError refuses to act on a guessed management cluster where acting cannot be undone.
func GuessedError(home, verb string) error {
	names, _ := Names(home)
	return fmt.Errorf("several management clusters were created from this host (%s) and the kubeconfig's current context is none of theirs: name the one to %s, or switch to its context NAME-admin@NAME",
		strings.Join(names, ", "), verb)
}

// ExportKubeconfig merges the admin kubeconfig of a management cluster this home made into
// exportFile, or kubectl's kubeconfig when it is empty, without switching context. It returns
// the file written.
func ExportKubeconfig(home, name, exportFile string) (string, error) {
	saved := SavedKubeconfig(home, name)
	cfg, err := clientcmd.LoadFromFile(saved)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("no management cluster %s was created from this host (%s is missing)", name, saved)
	}
	if err != nil {
		return "", err
	}
	path := exportFile
	if path == "" {
		path = kubeconfig.DefaultPath()
	}
	return path, kubeconfig.Merge(path, cfg, "")
}
