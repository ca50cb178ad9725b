// Package bundle builds imgpkg bundles from directories and pushes them to a registry: an OCI
// image whose one layer holds the directory's files and whose config carries imgpkg's bundle
// label, so that imgpkg and kapp-controller fetch it as a bundle.
package bundle

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
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

func writeTar(dir string, w io.Writer) error {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			paths = append(paths, path)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(paths)
	tw := tar.NewWriter(w)
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}
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
