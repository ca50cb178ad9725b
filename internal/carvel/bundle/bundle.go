// Package bundle builds imgpkg bundles from directories and pushes them to a registry: an OCI
// image whose one layer holds the directory's files and whose config carries imgpkg's bundle
// label, so that imgpkg and kapp-controller fetch it as a bundle.
package bundle

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// LabelBundle marks an image as an imgpkg bundle.
const LabelBundle = "dev.carvel.imgpkg.bundle"

// bundleFiles reads a bundle directory's files; it must have an images lock.
func bundleFiles(dir string) (map[string][]byte, error) {
	files, err := Files(dir)
	if err != nil {
		return nil, err
	}
	if _, ok := files[ImagesLockPath]; !ok {
		return nil, fmt.Errorf("%s is not a bundle: it needs %s (an ImagesLock, empty if the configuration uses no images)", dir, ImagesLockPath)
	}
	return files, nil
}

// build is the bundle image of files.
func build(files map[string][]byte) (v1.Image, error) {
	return image(files, map[string]string{LabelBundle: "true"})
}

// image is a one-layer linux/amd64 image of files (in name order, with fixed times, so that the
// same files always give the same digest) whose config carries labels.
func image(files map[string][]byte, labels map[string]string) (v1.Image, error) {
	var buf bytes.Buffer
	if err := writeTar(files, &buf); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Config.Labels = labels
	cfg.OS, cfg.Architecture = "linux", "amd64"
	return mutate.ConfigFile(img, cfg)
}

// Files returns the files below dir by their slash-separated path relative to it. Symbolic links
// are followed, so that package versions may share a configuration directory; the bundle holds
// the files themselves.
func Files(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	var walk func(real, rel string, depth int) error
	walk = func(real, rel string, depth int) error {
		if depth > 8 {
			return fmt.Errorf("%s: too many levels of symbolic links", real)
		}
		entries, err := os.ReadDir(real)
		if err != nil {
			return err
		}
		for _, e := range entries {
			path, name := filepath.Join(real, e.Name()), pathJoin(rel, e.Name())
			info, err := os.Stat(path) // follows links
			if err != nil {
				return err
			}
			switch {
			case info.IsDir():
				if err := walk(path, name, depth+1); err != nil {
					return err
				}
			case info.Mode().IsRegular():
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				files[name] = data
			}
		}
		return nil
	}
	if err := walk(dir, "", 0); err != nil {
		return nil, err
	}
	return files, nil
}

func pathJoin(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func writeTar(files map[string][]byte, w io.Writer) error {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	tw := tar.NewWriter(w)
	for _, rel := range paths {
		data := files[rel]
		h := &tar.Header{Name: rel, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// Push builds the bundle of dir and pushes it to ref, returning the pushed reference by digest.
func Push(dir, ref string) (string, error) { return push(dir, ref, nil) }

// LockImage pushes the image a bundle's lock names by tag (ref) to the bundle's registry and
// returns where it is, by digest.
type LockImage func(ref, registry string) (string, error)

// PushLocking is Push for a bundle whose lock names images by tag: lockImage pushes each beside
// the bundle, and the pushed bundle's lock names it by digest (the tag kept in the kbld.carvel.dev/id
// annotation), so that the bundle can be copied and relocated as any imgpkg bundle. dir is left
// as it is.
func PushLocking(dir, ref string, lockImage LockImage) (string, error) {
	return push(dir, ref, lockImage)
}

func push(dir, ref string, lockImage LockImage) (string, error) {
	files, err := bundleFiles(dir)
	if err != nil {
		return "", err
	}
	if lockImage != nil {
		if files[ImagesLockPath], err = lockByDigest(files[ImagesLockPath], ref, lockImage); err != nil {
			return "", fmt.Errorf("%s: %w", dir, err)
		}
	}
	img, err := build(files)
	if err != nil {
		return "", err
	}
	tag, err := name.ParseReference(ref, NameOptions(ref)...)
	if err != nil {
		return "", fmt.Errorf("invalid reference %q: %w", ref, err)
	}
	if err := remote.Write(tag, img); err != nil {
		return "", fmt.Errorf("failed to push %s: %w", ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	return tag.Context().Digest(digest.String()).String(), nil
}
