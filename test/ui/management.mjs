// Creates a management cluster entirely through the installer UI, in Debian's Chromium,
// headless, as a user would: the wizard filled (vSphere on slipway's vCenter simulator), the
// review's file and command, the
// deploy followed to its end (a reload while it runs showing the log from its first line,
// every step done, "Management cluster created!" in the log, the next commands), and a reload
// after it that shows the whole log again. The whole log is printed last, between
// "--- deploy log" and "--- end of deploy log", for the test to read.
//
// Usage: node management.mjs URL SCREENSHOT_DIR NAME VSPHERE_SERVER VSPHERE_USERNAME VSPHERE_PASSWORD ENDPOINT
// It prints what it checked and exits 1 on the first check that fails.
import { check, fillVSphere, launch } from "./browser.mjs";

const [url, shots, name, vcenter, vcUser, vcPassword, endpoint] = process.argv.slice(2);
if (!name || !endpoint) {
  console.error("usage: node management.mjs URL SCREENSHOT_DIR NAME VSPHERE_SERVER VSPHERE_USERNAME VSPHERE_PASSWORD ENDPOINT");
  process.exit(2);
}
const prefix = "vm";

const browser = await launch();
try {
  const page = await browser.newPage();
  await page.goto(url);
  await fillVSphere(page, shots, prefix + "0", { server: vcenter, username: vcUser, password: vcPassword, endpoint });
  await page.selectOption("#CONTROLPLANE_SIZE", "small");
  await page.fill("#CLUSTER_NAME", name);
  await page.fill("#WORKER_MACHINE_COUNT", "1");
  await page.focus("#CLUSTER_CIDR");
  await page.click("#review-button");
  await page.waitForSelector("#review", { state: "visible" });
  const command = await page.textContent("#review-command");
  const file = await page.textContent("#review-file");
  check(new RegExp("^slipway management-cluster create -f \\S+/clusterconfigs/" + name + "\\.yaml$").test(command), "the command: " + command);
  check(file.includes("CLUSTER_NAME: " + name) && file.includes("INFRASTRUCTURE_PROVIDER: vsphere"), "the file:\n" + file);
  check(file.includes("CONTROLPLANE_SIZE: small") && file.includes("VSPHERE_CONTROL_PLANE_ENDPOINT: " + endpoint), "the size and endpoint chosen are in the file");
  await page.screenshot({ path: shots + "/" + prefix + "1-review.png", fullPage: true });

  await page.click("#deploy-button");
  await page.waitForSelector("#deploy", { state: "visible" });
  // A screenshot while it runs, once the first step is under way.
  await page.waitForFunction(() => document.querySelectorAll("#deploy-steps li").length > 0, null, { timeout: 60000 });
  await page.screenshot({ path: shots + "/" + prefix + "2-deploying.png", fullPage: true });
  // A reload while it runs shows the whole log again, from its first line.
  const seen = await page.textContent("#deploy-log");
  await page.reload();
  await page.waitForFunction((n) => document.querySelector("#deploy-log").textContent.length >= n, seen.length, { timeout: 20000 });
  check((await page.textContent("#deploy-log")).startsWith(seen) && seen.startsWith("Logs of the command execution can also be found at: "),
    "a reload during the deploy shows the whole log from its first line");
  await page.waitForFunction(() => !["Deploying…", "Not started"].includes(document.querySelector("#deploy-state").textContent), null,
    { timeout: 15 * 60 * 1000, polling: 1000 });
  const state = await page.textContent("#deploy-state");
  const log = await page.textContent("#deploy-log");
  await page.screenshot({ path: shots + "/" + prefix + "3-created.png", fullPage: true });
  check(state === "Cluster created", "the deploy's state: " + state + "\n" + (await page.textContent("#failure-text")) + "\n" + log);
  check(log.startsWith("Logs of the command execution can also be found at: ") && log.includes("Management cluster created!"),
    "the log runs from its first line to the end");
  const steps = await page.$$eval("#deploy-steps li", (lis) => lis.map((li) => li.className + " " + li.textContent));
  check(steps.length >= 3 && steps.every((s) => s.startsWith("done ")), "every step done, with its time: " + steps.join(" | "));
  const next = await page.textContent("#next-commands");
  check(next.includes("slipway cluster create"), "the next commands: " + next);

  // A reload after the end shows the whole log and the result again.
  await page.reload();
  await page.waitForFunction((n) => document.querySelector("#deploy-log").textContent.length >= n, log.length, { timeout: 20000 });
  check((await page.textContent("#deploy-log")) === log && (await page.textContent("#deploy-state")) === "Cluster created", "the reloaded page shows the same log and result");
  console.log("--- deploy log\n" + log + "\n--- end of deploy log");
} finally {
  await browser.close();
}
