// Package ova imports Kubernetes node OVAs into a vCenter as VM templates, as TKG users do before
// creating clusters (seeds/000, "Uploading the OVAs to Vsphere"), and builds, for the vCenter
// simulator, node OVAs that carry the vApp properties of TKG's images and a blank disk.
package ova

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/ovf/importer"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

// Image is what a node OVA says of itself in its vApp properties.
type Image struct {
	// Name is the VM's name, such as ubuntu-2004-kube-v1.35.4+vmware.1.
	Name string
	// OVAVersion is the VERSION property, as the release's OSImage names it.
	OVAVersion string
	// Distro's Version is written as the OVA writes it (20.04).
	Distro vcenter.OS
}

var descriptor = template.Must(template.New("ovf").Parse(`<?xml version="1.0" encoding="UTF-8"?>
<!-- A Kubernetes node OVA built by slipway for its vCenter simulator: the vApp properties of TKG's node images, a blank disk. -->
<Envelope xmlns="http://schemas.dmtf.org/ovf/envelope/1"
          xmlns:ovf="http://schemas.dmtf.org/ovf/envelope/1"
          xmlns:rasd="http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_ResourceAllocationSettingData"
          xmlns:vmw="http://www.vmware.com/schema/ovf"
          xmlns:vssd="http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_VirtualSystemSettingData">
  <References/>
  <DiskSection>
    <Info>The node's disk: blank, nothing to boot from</Info>
    <Disk ovf:capacity="20" ovf:capacityAllocationUnits="byte * 2^30" ovf:diskId="vmdisk1" ovf:format="http://www.vmware.com/interfaces/specifications/vmdk.html#streamOptimized"/>
  </DiskSection>
  <NetworkSection>
    <Info>The list of logical networks</Info>
    <Network ovf:name="nic0">
      <Description>The node network</Description>
    </Network>
  </NetworkSection>
  <VirtualSystem ovf:id="{{.Name}}">
    <Info>A Kubernetes node</Info>
    <Name>{{.Name}}</Name>
    <OperatingSystemSection ovf:id="101" vmw:osType="{{.GuestID}}">
      <Info>The guest operating system</Info>
    </OperatingSystemSection>
    <VirtualHardwareSection>
      <Info>Virtual hardware requirements</Info>
      <System>
        <vssd:ElementName>Virtual Hardware Family</vssd:ElementName>
        <vssd:InstanceID>0</vssd:InstanceID>
        <vssd:VirtualSystemIdentifier>{{.Name}}</vssd:VirtualSystemIdentifier>
        <vssd:VirtualSystemType>vmx-15</vssd:VirtualSystemType>
      </System>
      <Item>
        <rasd:AllocationUnits>hertz * 10^6</rasd:AllocationUnits>
        <rasd:Description>Number of Virtual CPUs</rasd:Description>
        <rasd:ElementName>2 virtual CPU(s)</rasd:ElementName>
        <rasd:InstanceID>1</rasd:InstanceID>
        <rasd:ResourceType>3</rasd:ResourceType>
        <rasd:VirtualQuantity>2</rasd:VirtualQuantity>
      </Item>
      <Item>
        <rasd:AllocationUnits>byte * 2^20</rasd:AllocationUnits>
        <rasd:Description>Memory Size</rasd:Description>
        <rasd:ElementName>4096MB of memory</rasd:ElementName>
        <rasd:InstanceID>2</rasd:InstanceID>
        <rasd:ResourceType>4</rasd:ResourceType>
        <rasd:VirtualQuantity>4096</rasd:VirtualQuantity>
      </Item>
      <Item>
        <rasd:Address>0</rasd:Address>
        <rasd:Description>SCSI Controller</rasd:Description>
        <rasd:ElementName>SCSI Controller 0</rasd:ElementName>
        <rasd:InstanceID>4</rasd:InstanceID>
        <rasd:ResourceSubType>VirtualSCSI</rasd:ResourceSubType>
        <rasd:ResourceType>6</rasd:ResourceType>
      </Item>
      <Item>
        <rasd:AddressOnParent>0</rasd:AddressOnParent>
        <rasd:ElementName>Hard Disk 1</rasd:ElementName>
        <rasd:HostResource>ovf:/disk/vmdisk1</rasd:HostResource>
        <rasd:InstanceID>5</rasd:InstanceID>
        <rasd:Parent>4</rasd:Parent>
        <rasd:ResourceType>17</rasd:ResourceType>
      </Item>
      <Item>
        <rasd:AddressOnParent>0</rasd:AddressOnParent>
        <rasd:AutomaticAllocation>true</rasd:AutomaticAllocation>
        <rasd:Connection>nic0</rasd:Connection>
        <rasd:ElementName>ethernet0</rasd:ElementName>
        <rasd:InstanceID>3</rasd:InstanceID>
        <rasd:ResourceSubType>VmxNet3</rasd:ResourceSubType>
        <rasd:ResourceType>10</rasd:ResourceType>
      </Item>
    </VirtualHardwareSection>
    <ProductSection>
      <Info>Information about the installed software</Info>
      <Product>{{.Name}}</Product>
      <Vendor>slipway (simulated image)</Vendor>
      <Version>{{.OVAVersion}}</Version>
      <Category>{{.Category}}</Category>
{{- range .Properties}}
      <Property ovf:key="{{.Key}}" ovf:type="string" ovf:userConfigurable="false" ovf:value="{{.Value}}"/>
{{- end}}
    </ProductSection>
  </VirtualSystem>
</Envelope>
`))

// Build writes an OVA of the image: its descriptor and manifest. Its 20 GiB disk, TKG's
// images' size, is blank and has no file: the simulator's VMs run no guest, but CAPV clones only
// templates that have a disk, which it grows to the machine's size.
func Build(w io.Writer, img Image) error {
	if img.Name == "" || img.OVAVersion == "" || img.Distro.Name == "" || img.Distro.Version == "" || img.Distro.Arch == "" {
		return errors.New("an OVA needs a name, a VERSION and a distribution's name, version and architecture")
	}
	type property struct{ Key, Value string }
	var ovfData bytes.Buffer
	guest := "otherLinux64Guest"
	switch img.Distro.Name {
	case "ubuntu":
		guest = "ubuntu64Guest"
	case "photon":
		guest = "vmwarePhoton64Guest"
	}
	esc := func(s string) string {
		var b strings.Builder
		_ = xml.EscapeText(&b, []byte(s))
		return b.String()
	}
	err := descriptor.Execute(&ovfData, map[string]any{
		"Name": esc(img.Name), "OVAVersion": esc(img.OVAVersion), "GuestID": guest, "Category": esc(vcenter.PropertyCategory),
		"Properties": []property{
			{vcenter.PropertyVersion, esc(img.OVAVersion)},
			{vcenter.PropertyDistroName, esc(img.Distro.Name)},
			{vcenter.PropertyDistroVersion, esc(img.Distro.Version)},
			{vcenter.PropertyDistroArch, esc(img.Distro.Arch)},
		},
	})
	if err != nil {
		return err
	}
	base := fileBase(img.Name)
	sum := sha256.Sum256(ovfData.Bytes())
	manifest := fmt.Sprintf("SHA256(%s.ovf)= %x\n", base, sum)
	tw := tar.NewWriter(w)
	for _, f := range []struct {
		name string
		data []byte
	}{{base + ".ovf", ovfData.Bytes()}, {base + ".mf", []byte(manifest)}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), Format: tar.FormatUSTAR}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// fileBase is a file name for a VM name ('+' is not kept out of names by vCenter, but is by
// some file systems and tools).
func fileBase(name string) string { return strings.ReplaceAll(name, "+", "-") }

// Target is where an OVA is imported: inventory paths, and the template's name (empty: the
// OVA's own).
type Target struct {
	Datacenter, Folder, ResourcePool, Datastore, Network string
	Name                                                 string
}

// Import imports the OVA file into the target and marks the VM a template, as TKG's docs have
// users do with govc; it returns the template's inventory path.
func Import(ctx context.Context, c *vim25.Client, path string, t Target) (string, error) {
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("OVA %s: %w", path, err)
	}
	finder := find.NewFinder(c, true)
	dc, err := finder.Datacenter(ctx, t.Datacenter)
	if err != nil {
		return "", fmt.Errorf("datacenter %q: %w", t.Datacenter, err)
	}
	finder.SetDatacenter(dc)
	imp := &importer.Importer{Client: c, Finder: finder, Datacenter: dc, Archive: &importer.TapeArchive{Path: path, Opener: importer.Opener{Client: c}},
		Log: func(string) (int, error) { return 0, nil }}
	if imp.Folder, err = finder.Folder(ctx, t.Folder); err != nil {
		return "", fmt.Errorf("folder %q: %w", t.Folder, err)
	}
	if imp.ResourcePool, err = finder.ResourcePool(ctx, t.ResourcePool); err != nil {
		return "", fmt.Errorf("resource pool %q: %w", t.ResourcePool, err)
	}
	if imp.Datastore, err = finder.Datastore(ctx, t.Datastore); err != nil {
		return "", fmt.Errorf("datastore %q: %w", t.Datastore, err)
	}
	ovfPath, files, err := contents(path)
	if err != nil {
		return "", err
	}
	opts := importer.Options{DiskProvisioning: "thin", IPAllocationPolicy: "dhcpPolicy", IPProtocol: "IPv4"}
	name := t.Name
	if name == "" {
		raw, err := importer.ReadOvf(ovfPath, imp.Archive)
		if err != nil {
			return "", fmt.Errorf("OVA %s: %w", path, err)
		}
		e, err := importer.ReadEnvelope(raw)
		if err != nil {
			return "", fmt.Errorf("OVA %s: its descriptor cannot be read: %w", path, err)
		}
		if e.VirtualSystem == nil {
			return "", fmt.Errorf("OVA %s: its descriptor has no virtual system: build it with `slipway vsphere ova build`, or give it one", path)
		}
		name = e.VirtualSystem.ID
		if e.VirtualSystem.Name != nil {
			name = *e.VirtualSystem.Name
		}
	}
	opts.Name = &name
	if _, err := finder.VirtualMachine(ctx, imp.Folder.InventoryPath+"/"+name); err == nil {
		return "", fmt.Errorf("a VM named %s is already in %s: it may be this OVA, imported before; delete it or import under another name", name, imp.Folder.InventoryPath)
	}
	if t.Network != "" {
		opts.NetworkMapping = []importer.Network{{Name: "nic0", Network: t.Network}}
	}
	ref, err := upload(ctx, imp, ovfPath, files, opts)
	if err != nil {
		return "", fmt.Errorf("importing %s: %w", path, err)
	}
	if err := object.NewVirtualMachine(c, ref).MarkAsTemplate(ctx); err != nil {
		return "", fmt.Errorf("marking the imported VM a template: %w", err)
	}
	return imp.Folder.InventoryPath + "/" + name, nil
}

// upload imports the OVA's virtual system and uploads the disk files the OVA carries (files),
// as govc import.ova does. A disk the descriptor declares without a file (a blank disk, such as
// the simulator's images have) is created empty by vCenter, which still offers it for upload:
// it is left as created.
func upload(ctx context.Context, imp *importer.Importer, ovfPath string, files map[string]bool, opts importer.Options) (types.ManagedObjectReference, error) {
	info, lease, err := imp.ImportVApp(ctx, ovfPath, opts)
	if err != nil {
		return types.ManagedObjectReference{}, err
	}
	u := lease.StartUpdater(ctx, info)
	defer u.Done()
	for _, item := range info.Items {
		if !files[item.Path] {
			continue
		}
		if err := imp.Upload(ctx, lease, item); err != nil {
			_ = lease.Abort(ctx, &types.LocalizedMethodFault{Fault: &types.FileFault{File: item.Path}})
			return types.ManagedObjectReference{}, err
		}
	}
	return info.Entity, lease.Complete(ctx)
}

// contents names the descriptor inside an OVA (a tar archive whose first file is the .ovf) and
// the base names of the files it holds.
func contents(ova string) (string, map[string]bool, error) {
	f, err := os.Open(ova)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	ovfPath, files := "", map[string]bool{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", nil, fmt.Errorf("OVA %s is not a tar archive: %w", ova, err)
		}
		// The importer finds an item by the base name of an entry, as govmomi's TapeArchive does.
		files[path.Base(h.Name)] = true
		if ovfPath == "" && filepath.Ext(h.Name) == ".ovf" {
			ovfPath = h.Name
		}
	}
	if ovfPath == "" {
		return "", nil, fmt.Errorf("OVA %s has no .ovf descriptor", ova)
	}
	return ovfPath, files, nil
}
