// Drives `slipway ui` in Debian's Chromium, headless, as a user would create a workload cluster
// from it: the management cluster's workload clusters are listed with their packages and the
// workloads the local runtime simulates; the
// wizard, filled, shows the review's file and command; the deploy runs `cluster create`'s flow
// to its end, with the next commands; the new cluster is then listed.
//
// Usage: node workload.mjs URL SCREENSHOT_DIR NAME KUBERNETES_VERSION CNI WORKERS LISTED
// (LISTED: a workload cluster the list shows before the deploy). It prints what it checked and
// exits 1 on the first check that fails.
import { check, launch } from "./browser.mjs";

const [url, shots, name, version, cni, workers, listed] = process.argv.slice(2);
if (!listed) {
  console.error("usage: node workload.mjs URL SCREENSHOT_DIR NAME KUBERNETES_VERSION CNI WORKERS LISTED");
  process.exit(2);
}

// row returns the cells of the clusters table's row of a cluster, or null.
async function row(page, cluster) {
  const rows = await page.$$eval("#cluster-rows tr", (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
  return rows.find((cells) => cells[0] === cluster) || null;
}

const browser = await launch();
try {
  const page = await browser.newPage();
  await page.goto(url);
  check(!page.url().includes("token="), "the token leaves the address bar: " + page.url());
  await page.waitForSelector("#clusters", { state: "visible" });
  await page.waitForFunction((c) => [...document.querySelectorAll("#cluster-rows tr")].some((tr) => tr.cells[0].textContent === c), listed, { timeout: 20000 });
  const before = await row(page, listed);
  check(before[2] === "running" && /: reconciled/.test(before[7]), "the listed cluster, running, its packages reconciled: " + before.join(" | "));
  // Its CNI, calico, is a stand-in on the local runtime: the page says its pods are simulated.
  check(before[8].includes("kube-system/calico-node"), "the listed cluster's simulated workloads: " + before[8]);
  check((await row(page, name)) === null, name + " is not listed before its deploy");
  await page.screenshot({ path: shots + "/w1-clusters.png", fullPage: true });

  await page.fill("#CLUSTER_NAME", name);
  await page.selectOption("#CNI", cni);
  await page.fill("#WORKER_MACHINE_COUNT", workers);
  await page.fill("#KUBERNETES_VERSION", version);
  await page.focus("#CLUSTER_CIDR");
  await page.click("#review-button");
  await page.waitForSelector("#review", { state: "visible" });
  const command = await page.textContent("#review-command");
  const file = await page.textContent("#review-file");
  check(new RegExp("^slipway cluster create -f \\S+/clusterconfigs/" + name + "\\.flat\\.yaml$").test(command), "the command: " + command);
  check(file.includes("CLUSTER_NAME: " + name) && file.includes("CNI: " + cni) && file.includes("KUBERNETES_VERSION: " + version), "the file:\n" + file);
  await page.screenshot({ path: shots + "/w2-review.png", fullPage: true });

  await page.click("#deploy-button");
  await page.waitForSelector("#deploy", { state: "visible" });
  await page.waitForFunction(() => document.querySelector("#deploy-state").textContent !== "Deploying…" &&
    document.querySelector("#deploy-state").textContent !== "Not started", null, { timeout: 9 * 60 * 1000, polling: 1000 });
  const state = await page.textContent("#deploy-state");
  const log = await page.textContent("#deploy-log");
  await page.screenshot({ path: shots + "/w3-deployed.png", fullPage: true });
  check(state === "Cluster created", "the deploy's state: " + state + "\n" + log + "\n" + (await page.textContent("#failure-text")));
  check(log.includes("Workload cluster '" + name + "' created"), "the log says the cluster was created:\n" + log);
  const next = await page.textContent("#next-commands");
  check(next.includes("slipway cluster get " + name), "the next commands: " + next);

  // The list reads the Cluster's status, which its controllers write a moment after the
  // command's waits end: as a user would, refresh until it says running (at most a minute).
  let after = null;
  for (let i = 0; i < 30 && !(after && after[2] === "running"); i++) {
    if (i > 0) await page.waitForTimeout(2000);
    await page.click("#refresh-button");
    await page.waitForFunction((c) => [...document.querySelectorAll("#cluster-rows tr")].some((tr) => tr.cells[0].textContent === c), name, { timeout: 20000 });
    after = await row(page, name);
  }
  check(after[2] === "running" && after[5] === version + "+vmware.1", "the new cluster listed: " + after.join(" | "));
  await page.screenshot({ path: shots + "/w4-listed.png", fullPage: true });
} finally {
  await browser.close();
}
