// Drives the installer UI in Debian's Chromium, headless, as a user would: the page without the
// token is refused, and so is a request from another Origin even with the page's cookie; a
// field left with a bad value shows the configuration package's message at the field, an OIDC
// identity provider's among them; the review shows the saved file and the command; a deploy
// streams its log, and a reload gets the whole log again from the first line; a failed deploy
// says its cause.
//
// With a vCenter (the simulator), it first fills the vSphere page: the certificate's thumbprint
// shown and accepted, the login, the datacenter chosen from the vCenter's list and the lists it
// scopes, the OS image from its templates, up to the review of a vSphere configuration.
//
// Usage: node installer.mjs URL SCREENSHOT_DIR [VSPHERE_SERVER VSPHERE_USERNAME VSPHERE_PASSWORD]
// It prints what it checked and exits 1 on the first check that fails.
import { check, fillVSphere, launch } from "./browser.mjs";

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
  // With this page's cookie, a request from another Origin is still refused, and nothing lets
  // another site read an answer (no CORS header).
  const foreign = await page.request.get(base + "/api/options", { headers: { Origin: "http://evil.example.com" } });
  check(foreign.status() === 403 && !Object.keys(foreign.headers()).some((h) => h.startsWith("access-control-")),
    "a request from another Origin is refused (" + foreign.status() + ")");
  const own = await page.request.get(base + "/api/options", { headers: { Origin: base } });
  check(own.status() === 200, "the page's own Origin is served (" + own.status() + ")");

  if (vcenter) {
    await fillVSphere(page, shots, "v1", { server: vcenter, username: vcUser, password: vcPassword, endpoint: "127.0.100.9" });
    await page.fill("#CLUSTER_NAME", "ui-vsphere");
    await page.click("#review-button");
    await page.waitForSelector("#review", { state: "visible" });
    const vfile = await page.textContent("#review-file");
    check(vfile.includes("INFRASTRUCTURE_PROVIDER: vsphere") && vfile.includes("VSPHERE_TLS_THUMBPRINT: ") &&
      vfile.includes("VSPHERE_PASSWORD: <encoded:") && !vfile.includes(vcPassword) && vfile.includes("OS_NAME: ubuntu"),
      "the vSphere file, its password encoded, its OS image's OS_NAME:\n" + vfile);
    await page.screenshot({ path: shots + "/v2-review.png", fullPage: true });
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

  // Identity management: the OIDC fields for oidc only, each checked by the CLI's rules.
  await page.selectOption("#IDENTITY_MANAGEMENT_TYPE", "oidc");
  await page.waitForSelector("#OIDC_IDENTITY_PROVIDER_ISSUER_URL", { state: "visible" });
  check(await page.isHidden("#LDAP_HOST"), "the LDAP fields are hidden for oidc");
  await page.fill("#OIDC_IDENTITY_PROVIDER_ISSUER_URL", "http://login.example.com");
  await page.focus("#OIDC_IDENTITY_PROVIDER_CLIENT_ID");
  await page.waitForSelector("#OIDC_IDENTITY_PROVIDER_ISSUER_URL-error");
  const issuerMsg = await page.textContent("#OIDC_IDENTITY_PROVIDER_ISSUER_URL-error");
  check(issuerMsg.includes("OIDC_IDENTITY_PROVIDER_ISSUER_URL") && issuerMsg.includes("https URL"), "the issuer's error: " + issuerMsg);
  await page.screenshot({ path: shots + "/2-identity-error.png", fullPage: true });
  await page.fill("#OIDC_IDENTITY_PROVIDER_ISSUER_URL", "https://login.example.com/oauth2");
  await page.fill("#OIDC_IDENTITY_PROVIDER_CLIENT_ID", "slipway");
  await page.fill("#OIDC_IDENTITY_PROVIDER_CLIENT_SECRET", "s3cret-of-the-ui");
  await page.focus("#OIDC_IDENTITY_PROVIDER_SCOPES");
  await page.waitForSelector("#OIDC_IDENTITY_PROVIDER_ISSUER_URL-error", { state: "detached" });

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
  check(file.includes("IDENTITY_MANAGEMENT_TYPE: oidc") && file.includes("OIDC_IDENTITY_PROVIDER_CLIENT_SECRET: <encoded:") && !file.includes("s3cret-of-the-ui"),
    "the identity provider in the file, its secret encoded");
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
