#!/usr/bin/env bash
# Builds the package sources in packages/ into imgpkg bundles and a package repository bundle, and
# pushes them: every <refName>/<version>/bundle to REGISTRY/packages/<refName>:<version>, then the
# repository (each Package with its bundle's digest, and the PackageMetadata) to
# REGISTRY/packages/slipway-repo:TAG. Prints the repository's reference.
# Usage: hack/packages.sh [REGISTRY=127.0.0.1:5000] [TAG=v0.1.0]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
registry=${1:-127.0.0.1:5000}
tag=${2:-v0.1.0}
slipway=${SLIPWAY:-$root/bin/slipway}

repo=$(mktemp -d)
trap 'rm -rf "$repo"' EXIT
mkdir -p "$repo/packages" "$repo/.imgpkg"
lock="$repo/.imgpkg/images.yml"
printf 'apiVersion: imgpkg.carvel.dev/v1alpha1\nkind: ImagesLock\nimages:\n' > "$lock"

for versiondir in "$root"/packages/*/*/; do
	[ -f "$versiondir/package.yml" ] || continue
	refname=$(basename "$(dirname "$versiondir")")
	version=$(basename "$versiondir")
	ref=$("$slipway" package bundle push -b "$registry/packages/$refname:$version" -f "$versiondir/bundle")
	mkdir -p "$repo/packages/$refname"
	sed "s|@BUNDLE@|$ref|" "$versiondir/package.yml" > "$repo/packages/$refname/$version.yml"
	cp "$root/packages/$refname/metadata.yml" "$repo/packages/$refname/metadata.yml"
	printf -- '- image: %s\n' "$ref" >> "$lock"
	echo "pushed $refname $version: $ref" >&2
done
"$slipway" package bundle push -b "$registry/packages/slipway-repo:$tag" -f "$repo"
