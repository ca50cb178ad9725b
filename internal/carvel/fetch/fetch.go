// Package fetch is the first stage of an App as kapp-controller runs it, for what slipway renders
// itself (kapp-controller's own package, before kapp-controller runs): it writes what the App's
// fetch steps name (inline files and files from Secrets and ConfigMaps, an OCI
// image, an imgpkg bundle) into a directory.
package fetch

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"carvel.dev/imgpkg/pkg/imgpkg/lockconfig"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/carvel/bundle"
)

// Fetch writes every fetch step into dir: a single step at its root, several each in the
// directory named by its path or its index, as kapp-controller lays them out. Secrets and
// ConfigMaps are read from namespace; registries are reached through transport (nil: the
// system's CAs).
func Fetch(ctx context.Context, c client.Client, namespace string, steps []kappctrlv1alpha1.AppFetch, dir string, transport http.RoundTripper) error {
	if len(steps) == 0 {
		return errors.New("spec.fetch is empty: an App needs at least one fetch step")
	}
	for i, step := range steps {
		target := dir
		if len(steps) > 1 {
			sub := step.Path
			if sub == "" {
				sub = strconv.Itoa(i)
			}
			target = filepath.Join(dir, sub)
		}
		if err := os.MkdirAll(target, 0o700); err != nil {
			return err
		}
		var err error
		switch {
		case step.Inline != nil:
			err = inline(ctx, c, namespace, step.Inline, target)
		case step.ImgpkgBundle != nil:
			var reg Registry
			if reg, err = registry(ctx, c, namespace, step.ImgpkgBundle.SecretRef, transport); err == nil {
				err = image(ctx, reg, step.ImgpkgBundle.Image, "", target)
			}
			if err == nil {
				err = followRelocation(ctx, reg, step.ImgpkgBundle.Image, target)
			}
		case step.Image != nil:
			var reg Registry
			if reg, err = registry(ctx, c, namespace, step.Image.SecretRef, transport); err == nil {
				err = image(ctx, reg, step.Image.URL, step.Image.SubPath, target)
			}
		default:
			err = errors.New("only inline, image and imgpkgBundle sources are supported by slipway's rendering (http, git and helmChart are not)")
		}
		if err != nil {
			return fmt.Errorf("spec.fetch[%d]: %w", i, err)
		}
	}
	return nil
}

func inline(ctx context.Context, c client.Client, namespace string, in *kappctrlv1alpha1.AppFetchInline, dir string) error {
	for path, content := range in.Paths {
		if err := writeFile(dir, path, []byte(content)); err != nil {
			return err
		}
	}
	for i, from := range in.PathsFrom {
		var data map[string][]byte
		var sub string
		switch {
		case from.SecretRef != nil:
			s := &corev1.Secret{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: from.SecretRef.Name}, s); err != nil {
				return fmt.Errorf("inline.pathsFrom[%d]: Secret %s: %w", i, from.SecretRef.Name, err)
			}
			data, sub = s.Data, from.SecretRef.DirectoryPath
		case from.ConfigMapRef != nil:
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: from.ConfigMapRef.Name}, cm); err != nil {
				return fmt.Errorf("inline.pathsFrom[%d]: ConfigMap %s: %w", i, from.ConfigMapRef.Name, err)
			}
			data = map[string][]byte{}
			for k, v := range cm.Data {
				data[k] = []byte(v)
			}
			sub = from.ConfigMapRef.DirectoryPath
		}
		for k, v := range data {
			if err := writeFile(filepath.Join(dir, sub), k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// image pulls an image (an imgpkg bundle is one) and writes its files.
func image(ctx context.Context, reg Registry, ref, subPath, dir string) error {
	r, err := name.ParseReference(ref, bundle.NameOptions(ref)...)
	if err != nil {
		return fmt.Errorf("invalid image reference %q: %w", ref, err)
	}
	img, err := remote.Image(r, reg.Options(ctx)...)
	if err != nil {
		return fmt.Errorf("failed to pull %s: %w", ref, err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	return untar(rc, dir, subPath)
}

// followRelocation rewrites a fetched bundle's lock to where the bundle was copied (Relocated).
func followRelocation(ctx context.Context, reg Registry, ref, dir string) error {
	path := filepath.Join(dir, filepath.FromSlash(bundle.ImagesLockPath))
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	lock, ok := bundle.ParseImagesLock(data)
	if !ok {
		return fmt.Errorf("%s of %s is not an ImagesLock", bundle.ImagesLockPath, ref)
	}
	relocated, moved, err := Relocated(ctx, ref, lock, reg)
	if err != nil || !moved {
		return err
	}
	out, err := yaml.Marshal(relocated)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600)
}

// Relocated does what imgpkg pull does for a bundle that was copied (imgpkg copy puts a bundle
// and every image it locks in one repository, by digest): when every image the bundle's lock
// names is also in the bundle's own repository, it returns the lock naming them there, so that
// kbld gives workloads the copies; moved says so. A bundle that was not copied keeps its lock.
func Relocated(ctx context.Context, ref string, lock lockconfig.ImagesLock, reg Registry) (lockconfig.ImagesLock, bool, error) {
	r, err := name.ParseReference(ref, bundle.NameOptions(ref)...)
	if err != nil {
		return lock, false, fmt.Errorf("invalid image reference %q: %w", ref, err)
	}
	out := lockconfig.ImagesLock{LockVersion: lock.LockVersion, Images: slices.Clone(lock.Images)}
	moved := false
	for i, img := range out.Images {
		d, err := name.NewDigest(img.Image, bundle.NameOptions(img.Image)...)
		if err != nil || d.Context().String() == r.Context().String() {
			continue
		}
		copied := r.Context().Digest(d.DigestStr())
		if _, err := remote.Head(copied, reg.Options(ctx)...); err != nil {
			// Not all of it was copied here: the lock stays as it is, as imgpkg leaves it.
			return lock, false, nil
		}
		out.Images[i].Image = copied.String()
		moved = true
	}
	return out, moved, nil
}

// LockedImages reads the lock of a bundle pulled from ref (its files by path) as kbld would use
// it, following a relocation: each reference the configuration writes (kbld.carvel.dev/id) to
// the image locked for it. A bundle without a lock locks nothing.
func LockedImages(ctx context.Context, ref string, files map[string][]byte, reg Registry) (map[string]string, error) {
	data, ok := files[bundle.ImagesLockPath]
	if !ok {
		return nil, nil
	}
	lock, ok := bundle.ParseImagesLock(data)
	if !ok {
		return nil, fmt.Errorf("%s of %s is not an ImagesLock", bundle.ImagesLockPath, ref)
	}
	lock, _, err := Relocated(ctx, ref, lock, reg)
	if err != nil {
		return nil, err
	}
	images := map[string]string{}
	for _, img := range lock.Images {
		if id := img.Annotations[bundle.AnnotationKbldID]; id != "" {
			images[id] = img.Image
		}
	}
	return images, nil
}

// registry is how a fetch step reaches its registry: the credentials of its Secret in namespace
// (anonymous without one), through transport.
func registry(ctx context.Context, c client.Client, namespace string, ref *kappctrlv1alpha1.AppFetchLocalRef, transport http.RoundTripper) (Registry, error) {
	reg := Registry{Auth: authn.Anonymous, Transport: transport}
	if ref == nil || ref.Name == "" {
		return reg, nil
	}
	s := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, s); err != nil {
		return reg, fmt.Errorf("registry credentials Secret %s: %w", ref.Name, err)
	}
	reg.Auth = authn.FromConfig(authn.AuthConfig{
		Username: string(s.Data["username"]), Password: string(s.Data["password"]), RegistryToken: string(s.Data["token"]),
	})
	return reg, nil
}

func untar(r io.Reader, dir, subPath string) error {
	tr := tar.NewReader(r)
	prefix := strings.Trim(subPath, "/")
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		path := strings.TrimPrefix(filepath.Clean("/"+h.Name), "/")
		if prefix != "" {
			if !strings.HasPrefix(path, prefix+"/") {
				continue
			}
			path = strings.TrimPrefix(path, prefix+"/")
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxFileSize))
		if err != nil {
			return err
		}
		if err := writeFile(dir, path, data); err != nil {
			return err
		}
	}
}

// writeFile writes data at a relative path below dir, refusing paths that leave it.
func writeFile(dir, rel string, data []byte) error {
	target := filepath.Join(dir, filepath.Clean("/"+rel))
	if !strings.HasPrefix(target, filepath.Clean(dir)+string(filepath.Separator)) {
		return fmt.Errorf("path %q leaves the fetch directory", rel)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return err
	}
	return os.WriteFile(target, data, 0o600)
}
