// What the browser scripts share: the check that ends a script at its first failure, and
// Debian's Chromium, headless, as playwright-core starts it.
import { chromium } from "playwright-core";

// check prints what was checked, or fails the script with it.
export function check(ok, what) {
  if (!ok) {
    console.error("FAIL: " + what);
    process.exitCode = 1;
    throw new Error(what);
  }
  console.log("ok: " + what);
}

// launch starts Chromium ($CHROMIUM, else Debian's) headless, without its sandbox (the tests
// run as root), GPU or background traffic.
export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
}

// fillVSphere fills the wizard's vSphere page on slipway's vCenter simulator as a user would:
// the certificate's thumbprint shown and accepted, the login, the datacenter chosen from the
// vCenter's list and the lists it scopes, the OS image from its node OVA templates for
// KUBERNETES_VERSION v1.35.4, the simulator's inventory, the control-plane endpoint and an SSH
// key. It screenshots the thumbprint prompt and the filled page as PREFIX-thumbprint.png and
// PREFIX-vsphere.png in shots.
export async function fillVSphere(page, shots, prefix, vc) {
  await page.check("input[name=INFRASTRUCTURE_PROVIDER][value=vsphere]");
  await page.waitForSelector("#vsphere", { state: "visible" });
  await page.fill("#VSPHERE_SERVER", vc.server);
  await page.fill("#VSPHERE_USERNAME", vc.username);
  await page.fill("#VSPHERE_PASSWORD", vc.password);
  await page.click("#connect-button");
  await page.waitForSelector("#thumbprint-box", { state: "visible" });
  const prompt = await page.textContent("#thumbprint-text");
  check(/thumbprint ([0-9A-F]{2}:){19}[0-9A-F]{2}\./.test(prompt), "the thumbprint to accept: " + prompt);
  await page.screenshot({ path: shots + "/" + prefix + "-thumbprint.png", fullPage: true });
  await page.click("#accept-thumbprint");
  await page.waitForFunction(() => document.querySelector("#vsphere-status").textContent.startsWith("Connected"), null, { timeout: 30000 });
  const datacenters = await page.$$eval("#datacenters option", (os) => os.map((o) => o.value));
  check(datacenters.includes("/dc0"), "the vCenter's datacenters: " + datacenters);
  await page.fill("#VSPHERE_DATACENTER", "/dc0");
  await page.dispatchEvent("#VSPHERE_DATACENTER", "change");
  await page.waitForFunction(() => document.querySelector("#vsphere-status").textContent.includes("in /dc0"), null, { timeout: 30000 });
  const pools = await page.$$eval("#resourcePools option", (os) => os.map((o) => o.value));
  check(pools.includes("/dc0/host/cluster0/Resources/rp0"), "the datacenter's resource pools: " + pools);
  // The OS image: the datacenter's node OVA template, with its release's Kubernetes version.
  await page.fill("#KUBERNETES_VERSION", "v1.35.4");
  await page.dispatchEvent("#VSPHERE_DATACENTER", "change");
  await page.waitForFunction(() => [...document.querySelectorAll("#os-image option")].some((o) => o.textContent.includes("for KUBERNETES_VERSION")), null, { timeout: 30000 });
  const images = await page.$$eval("#os-image option", (os) => os.map((o) => o.textContent));
  check(images.some((o) => o.startsWith("/dc0/vm/folder0/ubuntu-2004-kube-v1.35.4+vmware.1: ubuntu 20.04 amd64, Kubernetes v1.35.4+vmware.1")),
    "the OS images: " + images.join(" | "));
  const chosen = await page.$$eval("#os-image option", (os) => os.find((o) => o.textContent.startsWith("/dc0/vm/folder0/ubuntu-2004-kube-v1.35.4+vmware.1:")).value);
  await page.selectOption("#os-image", chosen);
  check((await page.inputValue("#OS_NAME")) === "ubuntu" && (await page.inputValue("#OS_VERSION")) === "20.04" && (await page.inputValue("#OS_ARCH")) === "amd64",
    "the OS image chosen sets OS_NAME, OS_VERSION and OS_ARCH");
  await page.fill("#VSPHERE_RESOURCE_POOL", "/dc0/host/cluster0/Resources/rp0");
  await page.fill("#VSPHERE_DATASTORE", "/dc0/datastore/sharedVmfs-0");
  await page.fill("#VSPHERE_FOLDER", "/dc0/vm/folder0");
  await page.fill("#VSPHERE_NETWORK", "/dc0/network/VM Network");
  await page.fill("#VSPHERE_CONTROL_PLANE_ENDPOINT", vc.endpoint);
  await page.fill("#VSPHERE_SSH_AUTHORIZED_KEY", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBfcGigZ63XnMoqRl2PKwyhzQ6ChfGxQJhqvD/5SujkZ ui@example");
  await page.screenshot({ path: shots + "/" + prefix + "-vsphere.png", fullPage: true });
}
