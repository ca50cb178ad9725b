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
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// LabelBundle marks an image as an imgpkg bundle.
const LabelBundle = "dev.carvel.imgpkg.bundle"

// Build returns a bundle image of the files below dir. Files are added in name order with fixed
// times, so that the same directory always gives the same digest.
func Build(dir string) (v1.Image, error) {
	if _, err := os.Stat(filepath.Join(dir, ".imgpkg", "images.yml")); err != nil {
		return nil, fmt.Errorf("%s is not a bundle: it needs .imgpkg/images.yml (an ImagesLock, empty if the configuration uses no images)", dir)
	}
	var buf bytes.Buffer
	if err := writeTar(dir, &buf); err != nil {
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
	cfg.Config.Labels = map[string]string{LabelBundle: "true"}
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

func writeTar(dir string, w io.Writer) error {
	files, err := Files(dir)
	if err != nil {
		return err
	}
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
func Push(dir, ref string) (string, error) {
	img, err := Build(dir)
	if err != nil {
		return "", err
	}
	opts := []name.Option{}
	if host := strings.SplitN(ref, "/", 2)[0]; strings.HasPrefix(host, "localhost") || strings.HasPrefix(host, "127.") {
		opts = append(opts, name.Insecure)
	}
	tag, err := name.ParseReference(ref, opts...)
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
