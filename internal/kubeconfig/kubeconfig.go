// Package kubeconfig edits a user's kubeconfig file as kind does: the file is read, changed and
// written while its lock is held, FILE.lock, created exclusively, the lock kubectl takes too
// (client-go's clientcmd.ModifyConfig), so that two commands editing the same file at once lose
// neither's entries.
package kubeconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// DefaultPath returns where kubectl reads its configuration: the first path of $KUBECONFIG,
// else ~/.kube/config.
func DefaultPath() string {
	if paths := filepath.SplitList(os.Getenv("KUBECONFIG")); len(paths) > 0 && paths[0] != "" {
		return paths[0]
	}
	return clientcmd.RecommendedHomeFile
}

// Merge adds add's clusters, users and contexts to the file at path, replacing entries of the
// same names, and makes current the current context; an empty current leaves it as it is, as
// TKG saves credentials. A missing file is created (mode 0600, its directory 0700).
func Merge(path string, add *clientcmdapi.Config, current string) error {
	return modify(path, func(next *clientcmdapi.Config) {
		for k, v := range add.Clusters {
			next.Clusters[k] = v
		}
		for k, v := range add.AuthInfos {
			next.AuthInfos[k] = v
		}
		for k, v := range add.Contexts {
			next.Contexts[k] = v
		}
		if current != "" {
			next.CurrentContext = current
		}
	})
}

// RemoveContext removes a context from the file at path, with its cluster and user when no other
// context names them, and unsets the current context when it was that one. A missing file or
// context is no error.
func RemoveContext(path, name string) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return modify(path, func(next *clientcmdapi.Config) {
		removed, ok := next.Contexts[name]
		if !ok {
			return
		}
		delete(next.Contexts, name)
		clusterUsed, userUsed := false, false
		for _, c := range next.Contexts {
			clusterUsed = clusterUsed || c.Cluster == removed.Cluster
			userUsed = userUsed || c.AuthInfo == removed.AuthInfo
		}
		if !clusterUsed {
			delete(next.Clusters, removed.Cluster)
		}
		if !userUsed {
			delete(next.AuthInfos, removed.AuthInfo)
		}
		if next.CurrentContext == name {
			next.CurrentContext = ""
		}
	})
}

// lockWait is how long modify waits for another command's lock on the file.
var lockWait = 10 * time.Second

// modify reads the file's configuration, applies change and writes it, holding the file's lock;
// a missing file is created (mode 0600, its directory 0700). ModifyConfig cannot be used for
// this: it takes the lock only after its caller has read the file, then writes the caller's
// whole configuration, and so deletes an entry another command added in between.
func modify(path string, change func(*clientcmdapi.Config)) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	lock := path + ".lock"
	deadline := time.Now().Add(lockWait)
	for {
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			f.Close()
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("failed to lock kubeconfig %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kubeconfig %s has been locked by another command for %s: remove %s if none is editing it", path, lockWait, lock)
		}
		time.Sleep(time.Duration(10+rand.IntN(40)) * time.Millisecond)
	}
	defer os.Remove(lock)
	cfg, err := clientcmd.LoadFromFile(path)
	if errors.Is(err, os.ErrNotExist) {
		cfg = clientcmdapi.NewConfig()
	} else if err != nil {
		return fmt.Errorf("failed to read kubeconfig %s: %w", path, err)
	}
	change(cfg)
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("failed to write kubeconfig %s: %w", path, err)
	}
	return nil
}
