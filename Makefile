# slipway's build. `make test` is the one command that tests everything; it builds the upstream
# binaries first when they are missing.

SHELL := /usr/bin/env bash -o pipefail
.DEFAULT_GOAL := build

ROOT        := $(abspath .)
BIN         := $(ROOT)/bin
TOOLS_BIN   := $(BIN)/tools
CONTROLLER_GEN := $(TOOLS_BIN)/controller-gen
STATICCHECK := $(TOOLS_BIN)/staticcheck
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# The commit's date and short SHA, as the tanzu CLI's `version` prints its buildDate and sha.
BUILD_DATE  ?= $(shell git log -1 --format=%cs 2>/dev/null)
BUILD_SHA   ?= $(shell git rev-parse --short=9 HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
LDFLAGS     := -X github.com/slipway-dev/slipway/internal/version.version=$(VERSION) \
	-X github.com/slipway-dev/slipway/internal/version.buildDate=$(BUILD_DATE) -X github.com/slipway-dev/slipway/internal/version.sha=$(BUILD_SHA)
GO_TEST_FLAGS ?= -timeout 75m

# The assets `make test` needs; hack/tools/build.sh skips what exists with the flags it gives, so
# a change to it (a version stamped in) reaches binaries built before.
ASSET_STAMPS := $(BIN)/etcd/v3.6.5/etcd $(BIN)/etcd/v3.6.5/etcdctl \
	$(foreach v,v1.35.4 v1.34.3,$(foreach c,kube-apiserver kube-controller-manager kube-scheduler kubelet kubeadm kube-proxy,$(BIN)/k8s/$(v)/$(c))) \
	$(BIN)/k8s/v1.35.4/kubectl

.PHONY: build
build: ## Build bin/slipway.
	go build -ldflags "$(LDFLAGS)" -o $(BIN)/slipway ./cmd/slipway

.PHONY: assets
assets: ## Build the upstream binaries (the Kubernetes control plane and node binaries of each release, etcd) into bin/.
	hack/tools/build.sh

$(ASSET_STAMPS): hack/tools/build.sh
	hack/tools/build.sh

$(CONTROLLER_GEN): hack/tools/go.mod hack/tools/go.sum
	cd hack/tools && go build -o $@ sigs.k8s.io/controller-tools/cmd/controller-gen

$(STATICCHECK): hack/tools/go.mod hack/tools/go.sum
	cd hack/tools && go build -o $@ honnef.co/go/tools/cmd/staticcheck

KAPP_CONTROLLER_APIS := github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1 \
	github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1 \
	github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1

PACKAGES_REGISTRY ?= 127.0.0.1:5000
PACKAGES_TAG ?= v0.1.0

.PHONY: image-layout
image-layout: $(ASSET_STAMPS) ## Build every image slipway ships into bin/images/layout (an OCI image layout), without pushing.
	go run ./hack/images build

.PHONY: conformance
conformance: ## Run Kubernetes v1.35.4's [Conformance] tests on a local cluster of real nodes and report what passes (hack/conformance.sh; FOCUS=, SKIP=, TIMEOUT=, PROCS=, KEEP=1).
	hack/conformance.sh $(if $(FOCUS),'$(FOCUS)')

.PHONY: images
images: image-layout build ## Build every image slipway ships and push it to the local registry (PACKAGES_REGISTRY).
	$(BIN)/slipway local registry start --address $(PACKAGES_REGISTRY)
	go run ./hack/images push $(PACKAGES_REGISTRY)
	go run ./hack/images list

# CERT_MANAGER_MANIFEST is upstream cert-manager's release manifest, rendered from its chart in the
# module that builds its images; rendered once, kept in bin/.
CERT_MANAGER_VERSION := $(shell sed -n 's|^\tgithub.com/cert-manager/cert-manager ||p' hack/images/cert-manager/go.mod)
CERT_MANAGER_MANIFEST := $(BIN)/cert-manager/$(CERT_MANAGER_VERSION)/cert-manager.yaml

$(CERT_MANAGER_MANIFEST):
	mkdir -p $(dir $@)
	cd hack/images/cert-manager && go run ./render -o $@

.PHONY: providers
providers: image-layout $(CERT_MANAGER_MANIFEST) ## Build the local clusterctl provider repository (Cluster API, kubeadm, local, upstream cert-manager) into bin/clusterctl-repo, its images locked by digest.
	go run ./hack/clusterctl-repo -cert-manager $(CERT_MANAGER_MANIFEST) $(BIN)/clusterctl-repo

# KAPP_CONTROLLER_CONFIG is upstream kapp-controller's release configuration (ytt templates, values
# schema, overlays), copied from the module that builds its image; the kapp-controller package's
# bundle loads it as a ytt library through a symbolic link (config/_ytt_lib/kapp-controller).
KAPP_CONTROLLER_VERSION := $(shell sed -n 's|^require github.com/vmware-tanzu/carvel-kapp-controller ||p' hack/images/kapp-controller/go.mod)
KAPP_CONTROLLER_CONFIG := $(BIN)/kapp-controller/$(KAPP_CONTROLLER_VERSION)/config

$(KAPP_CONTROLLER_CONFIG): hack/images/kapp-controller/go.mod
	rm -rf $@ && mkdir -p $(dir $@)
	cd hack/images/kapp-controller && go mod download github.com/vmware-tanzu/carvel-kapp-controller && \
		cp -R "$$(go list -m -f '{{.Dir}}' github.com/vmware-tanzu/carvel-kapp-controller)/config" $@
	chmod -R u+w $@

.PHONY: packages
packages: build image-layout providers $(KAPP_CONTROLLER_CONFIG) ## Build packages/ into imgpkg bundles and a repository bundle, pushed with their images to the local registry.
	$(BIN)/slipway local registry start --address $(PACKAGES_REGISTRY)
	hack/packages.sh $(PACKAGES_REGISTRY) $(PACKAGES_TAG)

.PHONY: management-cluster
management-cluster: $(ASSET_STAMPS) images providers packages ## Build what is needed, then create a local management cluster (MC_FLAGS="-f FILE --name NAME ..." passes flags).
	$(BIN)/slipway management-cluster create $(MC_FLAGS)

# rbac ROLE,FILE,PACKAGES generates the ClusterRole ROLE into FILE from the +kubebuilder:rbac
# markers of the Go PACKAGES a component runs.
rbac = $(CONTROLLER_GEN) rbac:roleName=$(1),fileName=$(notdir $(2)),headerFile=hack/boilerplate.yaml.txt \
	$(foreach p,$(3),paths=$(p)) output:rbac:artifacts:config=$(dir $(2))
PKG_CONFIG = packages/$(1).tanzu.vmware.com/0.1.0/bundle/config
# What make generate writes, as git pathspecs, for make verify (a quoted * matches across /).
GENERATED := api config 'packages/*.generated.yml'

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy functions and CRDs from the API types (slipway's and kapp-controller's), and the components' ClusterRoles from their RBAC markers.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(CONTROLLER_GEN) crd:crdVersions=v1 $(foreach g,run cni cpi csi,paths=./api/$(g)/...) output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) crd:crdVersions=v1 paths=./api/infrastructure/... output:crd:artifacts:config=config/crd/infrastructure
	$(CONTROLLER_GEN) crd:crdVersions=v1 paths=./api/cli/... output:crd:artifacts:config=config/crd/cli
	$(CONTROLLER_GEN) crd:crdVersions=v1 paths=./api/core/... output:crd:artifacts:config=config/crd/core
	rm -rf config/crd/carvel
	$(CONTROLLER_GEN) crd:crdVersions=v1 $(foreach p,$(KAPP_CONTROLLER_APIS),paths=$(p)) output:crd:artifacts:config=config/crd/carvel
	go run ./hack/carvel-crds config/crd/carvel
	$(call rbac,tanzu-addons-manager-sa,$(call PKG_CONFIG,addons-manager)/tanzu-addons-manager.role.generated.yml,./internal/controllers/addons/...)
	$(call rbac,tkr-status-controller-manager-sa,$(call PKG_CONFIG,tkr-service)/tkr-status-controller.role.generated.yml,./internal/controllers/tkr/status)
	$(call rbac,tkr-resolver-cluster-webhook-manager-sa,$(call PKG_CONFIG,tkr-service)/tkr-resolver-cluster-webhook.role.generated.yml,./internal/controllers/tkr/resolver)
	$(call rbac,tkr-conversion-webhook-manager-sa,$(call PKG_CONFIG,tkr-service)/tkr-conversion-webhook.role.generated.yml,./internal/controllers/tkr/conversion)
	$(call rbac,tkr-source-controller-manager-sa,$(call PKG_CONFIG,tkr-source-controller)/tkr-source-controller.role.generated.yml,./internal/controllers/tkr/source)
	$(call rbac,tkr-vsphere-resolver-webhook-manager-clusterrole,$(call PKG_CONFIG,tkr-vsphere-resolver)/tkr-vsphere-resolver-webhook.role.generated.yml,./internal/controllers/tkr/vsphere)
	$(call rbac,tanzu-featuregates-manager-clusterrole,$(call PKG_CONFIG,featuregates)/tanzu-featuregates.role.generated.yml,./internal/controllers/featuregates)
	$(call rbac,tanzu-auth-controller-manager-clusterrole,$(call PKG_CONFIG,tanzu-auth)/tanzu-auth.role.generated.yml,./internal/controllers/tanzuauth)
	$(call rbac,object-propagation-controller-manager-clusterrole,$(call PKG_CONFIG,tkg-clusterclass)/object-propagation-controller.role.generated.yml,./internal/controllers/propagation)
	$(call rbac,tanzu-capabilities-manager-clusterrole,$(call PKG_CONFIG,framework)/tanzu-capabilities.role.generated.yml,./internal/controllers/capabilities)
	$(call rbac,manager-role,config/infrastructure-local/role.generated.yaml,./internal/local/infrastructure)

.PHONY: verify
verify: generate ## Check that generated code is current, code is formatted and vetted, DESIGN's import rules hold and go.mod is tidy and pinned.
	@git diff --exit-code -- $(GENERATED) || { echo "generated code is stale: run 'make generate' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- $(GENERATED) | grep '^??')" || { echo "untracked generated files: run 'make generate' and commit"; git status --porcelain -- $(GENERATED); exit 1; }
	@bad=$$(gofmt -l $$(git ls-files '*.go')); test -z "$$bad" || { echo "not gofmt-formatted (run gofmt -w):"; echo "$$bad"; exit 1; }
	go vet ./...
	hack/verify-imports.sh
	hack/verify-stack.sh
	@for m in . hack/images/cluster-api hack/images/local-path-provisioner hack/images/metrics-server-v0.6 hack/images/metrics-server-v0.7 hack/images/cloud-provider-vsphere-v1.26 hack/images/cloud-provider-vsphere-v1.27 hack/images/coredns-v1.12.4 hack/images/coredns-v1.12.1 hack/images/kapp-controller hack/images/carvel hack/images/cert-manager hack/images/ipam-in-cluster hack/tools hack/tools/clients hack/tools/carvel hack/tools/conformance hack/tools/etcd hack/tools/k8s-v1.35 hack/tools/k8s-v1.34; do \
		(cd $$m && go mod tidy -diff) || { echo "go.mod of $$m is not tidy: run 'go mod tidy' there"; exit 1; }; \
	done

.PHONY: lint
lint: $(STATICCHECK) ## Run staticcheck.
	$(STATICCHECK) ./...

# The installer UI's browser test drives Chromium with playwright-core, pinned in test/ui's lock.
UI_TEST_DEPS := test/ui/node_modules/.installed

$(UI_TEST_DEPS): test/ui/package.json test/ui/package-lock.json
	cd test/ui && npm ci --no-audit --no-fund && touch node_modules/.installed

.PHONY: test
# The e2e package, which takes most of the time and waits on its clusters for much of it, is named
# first so that go test builds and starts it first and runs the other packages beside it.
# hack/testreport prints what go test prints, then the tests that took longest with their phases.
test: $(ASSET_STAMPS) providers $(KAPP_CONTROLLER_CONFIG) $(UI_TEST_DEPS) ## Run unit and envtest tests (builds the upstream binaries and the provider repository first).
	go build -o $(TOOLS_BIN)/testreport ./hack/testreport
	go test -json $(GO_TEST_FLAGS) ./test/e2e ./... | $(TOOLS_BIN)/testreport

.PHONY: clean
clean: ## Remove bin/ except the upstream binaries, which take minutes to build.
	rm -rf $(BIN)/slipway $(TOOLS_BIN)

.PHONY: help
help:
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'
