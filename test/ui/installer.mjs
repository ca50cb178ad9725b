// Drives the installer UI in Debian's Chromium, headless, as a user would: the page without the
// token is refused; a field left with a bad value shows the configuration package's message at
// the field; the review shows the saved file and the command; a deploy streams its log, and a
// reload gets the whole log again from the first line; a failed deploy says its cause.
//
// With a vCenter (the simulator), it first fills the vSphere page: the certificate's thumbprint
// shown and accepted, the login, the datacenter chosen from the vCenter's list and the lists it
// scopes, the OS image from its templates, up to the review of a vSphere configuration.
//
// Usage: node installer.mjs URL SCREENSHOT_DIR [VSPHERE_SERVER VSPHERE_USERNAME VSPHERE_PASSWORD]
// It prints what it checked and exits 1 on the first check that fails.
import { check, launch } from "./browser.mjs";

const [url, shots, vcenter, vcUser, vcPassword] = process.argv.slice(2);
if (!url || !shots) {
  console.error("usage: node installer.mjs URL SCREENSHOT_DIR");
  process.exit(2);
}
const base = new URL(url).origin;

const browser = await launch();
try {
  // Without the token, nothing.
  const stranger = await browser.newPage();
  const refused = await stranger.goto(base + "/");
  check(refused.status() === 401, "the page without the token is refused (" + refused.status() + ")");
  const api = await stranger.goto(base + "/api/options");
  check(api.status() === 401, "the API without the token is refused (" + api.status() + ")");
  await stranger.close();

  const page = await browser.newPage();
  await page.goto(url);
  check(!page.url().includes("token="), "the token leaves the address bar: " + page.url());
  await page.screenshot({ path: shots + "/1-wizard.png", fullPage: true });

  if (vcenter) {
    await page.check("input[name=INFRASTRUCTURE_PROVIDER][value=vsphere]");
    await page.waitForSelector("#vsphere", { state: "visible" });
    await page.fill("#VSPHERE_SERVER", vcenter);
    await page.fill("#VSPHERE_USERNAME", vcUser);
    await page.fill("#VSPHERE_PASSWORD", vcPassword);
    await page.click("#connect-button");
    await page.waitForSelector("#thumbprint-box", { state: "visible" });
    const prompt = await page.textContent("#thumbprint-text");
    check(/thumbprint ([0-9A-F]{2}:){19}[0-9A-F]{2}\./.test(prompt), "the thumbprint to accept: " + prompt);
    await page.screenshot({ path: shots + "/v1-thumbprint.png", fullPage: true });
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
    await page.selectOption("#os-image", "0");
    check((await page.inputValue("#OS_NAME")) === "ubuntu" && (await page.inputValue("#OS_VERSION")) === "20.04" && (await page.inputValue("#OS_ARCH")) === "amd64",
      "the OS image chosen sets OS_NAME, OS_VERSION and OS_ARCH");
    await page.fill("#VSPHERE_RESOURCE_POOL", "/dc0/host/cluster0/Resources/rp0");
    await page.fill("#VSPHERE_DATASTORE", "/dc0/datastore/sharedVmfs-0");
    await page.fill("#VSPHERE_FOLDER", "/dc0/vm/folder0");
    await page.fill("#VSPHERE_NETWORK", "/dc0/network/VM Network");
    await page.fill("#VSPHERE_CONTROL_PLANE_ENDPOINT", "127.0.100.9");
    await page.fill("#VSPHERE_SSH_AUTHORIZED_KEY", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBfcGigZ63XnMoqRl2PKwyhzQ6ChfGxQJhqvD/5SujkZ ui@example");
    await page.fill("#CLUSTER_NAME", "ui-vsphere");
    await page.screenshot({ path: shots + "/v2-vsphere.png", fullPage: true });
    await page.click("#review-button");
    await page.waitForSelector("#review", { state: "visible" });
    const vfile = await page.textContent("#review-file");
    check(vfile.includes("INFRASTRUCTURE_PROVIDER: vsphere") && vfile.includes("VSPHERE_TLS_THUMBPRINT: ") &&
      vfile.includes("VSPHERE_PASSWORD: <encoded:") && !vfile.includes(vcPassword) && vfile.includes("OS_NAME: ubuntu"),
      "the vSphere file, its password encoded, its OS image's OS_NAME:\n" + vfile);
    await page.screenshot({ path: shots + "/v3-review.png", fullPage: true });
    // Back to the wizard, on the local provider, for the rest.
    await page.click("#edit-button");
    await page.check("input[name=INFRASTRUCTURE_PROVIDER][value=local]");
    await page.fill("#CLUSTER_NAME", "");
    await page.fill("#KUBERNETES_VERSION", "");
  }

  // A bad value, left: the CLI's message at the field.
  await page.fill("#WORKER_MACHINE_COUNT", "three");
  await page.focus("#CLUSTER_CIDR");
  await page.waitForSelector("#WORKER_MACHINE_COUNT-error");
  const msg = await page.textContent("#WORKER_MACHINE_COUNT-error");
  check(msg.includes("WORKER_MACHINE_COUNT") && msg.includes("three"), "the field's error: " + msg);
  check((await page.getAttribute("#WORKER_MACHINE_COUNT", "aria-invalid")) === "true", "the field is marked invalid");
  await page.screenshot({ path: shots + "/2-validation-error.png", fullPage: true });

  // The review is refused while a field is wrong, then shows the file and the command.
  const refusedReview = page.waitForResponse((r) => r.url().endsWith("/api/review"));
  await page.click("#review-button");
  check((await refusedReview).status() === 422 && (await page.isHidden("#review")), "no review while a field is wrong");
  await page.fill("#WORKER_MACHINE_COUNT", "1");
  await page.fill("#CLUSTER_NAME", "ui-mgmt");
  await page.focus("#CLUSTER_CIDR");
  await page.waitForSelector("#WORKER_MACHINE_COUNT-error", { state: "detached" });
  await page.click("#review-button");
  await page.waitForSelector("#review", { state: "visible" });
  const command = await page.textContent("#review-command");
  const file = await page.textContent("#review-file");
  check(/^slipway management-cluster create -f \S+\/clusterconfigs\/ui-mgmt\.yaml$/.test(command), "the command: " + command);
  check(file.includes("CLUSTER_NAME: ui-mgmt") && file.includes("WORKER_MACHINE_COUNT: \"1\""), "the file:\n" + file);
  await page.screenshot({ path: shots + "/3-review.png", fullPage: true });

  // Deploy: the log streams; this test's package repository cannot be read, so the flow stops
  // at its validation, and the page says why.
  await page.click("#deploy-button");
  await page.waitForSelector("#deploy", { state: "visible" });
  await page.waitForFunction(() => document.querySelector("#deploy-state").textContent === "The deploy failed", null, { timeout: 60000 });
  const before = await page.textContent("#deploy-log");
  const cause = await page.textContent("#failure-text");
  check(before.startsWith("Logs of the command execution can also be found at: "), "the log's first line:\n" + before);
  check(cause.startsWith("configuration validation failed: "), "the failure's cause: " + cause);
  check(before.includes("Error: configuration validation failed: "), "the log ends with the error, as the command prints it:\n" + before);
  check(await page.isHidden("#resume-button"), "no resume without a kept bootstrap cluster");
  await page.screenshot({ path: shots + "/4-deploy-failed.png", fullPage: true });

  // A reload gets the whole log from the start.
  await page.reload();
  await page.waitForFunction((n) => document.querySelector("#deploy-log").textContent.length >= n, before.length, { timeout: 20000 });
  const after = await page.textContent("#deploy-log");
  check(after === before, "the reloaded log is the same:\n" + after);
  await page.screenshot({ path: shots + "/5-deploy-reloaded.png", fullPage: true });
} finally {
  await browser.close();
}
