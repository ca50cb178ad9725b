#!/usr/bin/env bash
# Builds the package sources in packages/ into imgpkg bundles and a package repository bundle, and
# pushes them: every <refName>/<version>/bundle to REGISTRY/packages/<refName>:<version>, then the
# repository (each Package with its bundle's digest, and the PackageMetadata) to
# REGISTRY/packages/slipway-repo:TAG. Then the TKR catalogue of packages/tkr: each release's bundle
# (its ytt configuration, its values and the Package objects of its bootstrap packages) to
# REGISTRY/packages/tkr:<version>, the TKR package repository naming it to
# REGISTRY/packages/tkr-repository:<version>, and the compatibility metadata to
# REGISTRY/packages/tkr-compatibility:v1 ("+" is written "_" in tags). Each image a package's lock
# names is pushed beside it (REGISTRY/<image path>:<tag>) from the images `make images` built
# (bin/images/layout, or $SLIPWAY_IMAGES) and every lock names what it holds by digest, so that
# `imgpkg copy -b` of the repository relocates all of it; the repository's own lock also holds the
# provider repository's images. Prints the repository's reference.
# Usage: hack/packages.sh [REGISTRY=127.0.0.1:5000] [TAG=v0.1.0]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
registry=${1:-127.0.0.1:5000}
tag=${2:-v0.1.0}
slipway=${SLIPWAY:-$root/bin/slipway}
images=${SLIPWAY_IMAGES:-$root/bin/images/layout}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# new_bundle DIR makes a bundle directory with an empty ImagesLock.
new_bundle() {
	mkdir -p "$1/.imgpkg"
	printf 'apiVersion: imgpkg.carvel.dev/v1alpha1\nkind: ImagesLock\nimages:\n' > "$1/.imgpkg/images.yml"
}

# lock_image DIR REF adds a bundle's reference to DIR's ImagesLock, so that imgpkg copies it with
# DIR's bundle and kbld resolves the reference to where the copy put it.
lock_image() {
	printf -- '- image: %s\n  annotations:\n    kbld.carvel.dev/id: %s\n' "$2" "$2" >> "$1/.imgpkg/images.yml"
}

repo=$work/repo
new_bundle "$repo"
mkdir -p "$repo/packages"

for versiondir in "$root"/packages/*/*/; do
	[ -f "$versiondir/package.yml" ] || continue
	refname=$(basename "$(dirname "$versiondir")")
	version=$(basename "$versiondir")
	ref=$("$slipway" package bundle push -b "$registry/packages/$refname:$version" -f "$versiondir/bundle" --images "$images")
	mkdir -p "$repo/packages/$refname"
	sed "s|@BUNDLE@|$ref|" "$versiondir/package.yml" > "$repo/packages/$refname/$version.yml"
	cp "$root/packages/$refname/metadata.yml" "$repo/packages/$refname/metadata.yml"
	lock_image "$repo" "$ref"
	echo "pushed $refname $version: $ref" >&2
done

# tkr_package writes the Package that installs a TKR bundle, labelled as the TKR source expects.
tkr_package() {
	local version=${1#v} bundle=$2
	cat <<YAML
apiVersion: data.packaging.carvel.dev/v1alpha1
kind: Package
metadata:
  name: tkr.tanzu.vmware.com.$version
  labels:
    run.tanzu.vmware.com/tkr-package: ""
spec:
  refName: tkr.tanzu.vmware.com
  version: $version
  releaseNotes: Tanzu Kubernetes release v$version
  template:
    spec:
      fetch:
      - imgpkgBundle:
          image: $bundle
      template:
      - ytt:
          paths: [config/]
      - kbld:
          paths: ["-", .imgpkg/images.yml]
      deploy:
      - kapp: {}
YAML
}

for values in "$root"/packages/tkr/v*/values.yml; do
	version=$(sed -n 's/^version: *//p' "$values")
	tkrtag=${version//+/_}
	bundle=$work/tkr-$tkrtag
	new_bundle "$bundle"
	mkdir -p "$bundle/config/packages"
	cp "$root"/packages/tkr/config/* "$bundle/config/"
	cp "$values" "$bundle/config/release-values.yml"
	# The bootstrap packages are the entries of the values' packages: map.
	sed -n '/^packages:/,/^[^ ]/s/^  \([a-z-]*\): *\(.*\)/\1 \2/p' "$values" | while read -r short full; do
		src="$repo/packages/$short.tanzu.vmware.com/${full%%+*}.yml"
		[ -f "$src" ] || { echo "$values: package $short.tanzu.vmware.com $full has no source in packages/" >&2; exit 1; }
		cp "$src" "$bundle/config/packages/$short.tanzu.vmware.com.yml"
		lock_image "$bundle" "$(sed -n 's/^ *image: *//p' "$src" | tr -d '"')"
	done
	ref=$("$slipway" package bundle push -b "$registry/packages/tkr:$tkrtag" -f "$bundle")
	tkrrepo=$work/tkr-repository-$tkrtag
	new_bundle "$tkrrepo"
	lock_image "$tkrrepo" "$ref"
	mkdir -p "$tkrrepo/packages/tkr.tanzu.vmware.com"
	tkr_package "$version" "$ref" > "$tkrrepo/packages/tkr.tanzu.vmware.com/${version#v}.yml"
	"$slipway" package bundle push -b "$registry/packages/tkr-repository:$tkrtag" -f "$tkrrepo" >/dev/null
	echo "pushed TKR $version: $ref" >&2
done
compat=$work/compatibility
new_bundle "$compat"
cp "$root/packages/tkr/compatibility.yaml" "$compat/"
"$slipway" package bundle push -b "$registry/packages/tkr-compatibility:v1" -f "$compat" >/dev/null
echo "pushed the TKR compatibility metadata" >&2

# The provider repository's images (`make providers` locks them by digest) go beside the
# repository and into its lock, so that imgpkg copy -b of the repository carries them and
# management-cluster create runs the providers from where the repository is.
providers=$root/bin/clusterctl-repo
[ -d "$providers" ] || { echo "$providers is missing: run 'make providers'" >&2; exit 1; }
for image in $(sed -n 's/^ *image: *\([^@]*\)@sha256:.*/\1/p' "$providers"/*/*/*.yaml | sort -u); do
	lock_image "$repo" "$image"
done

"$slipway" package bundle push -b "$registry/packages/slipway-repo:$tag" -f "$repo" --images "$images"
