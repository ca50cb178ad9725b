// Creates a local management cluster entirely through the installer UI, in Debian's Chromium,
// headless, as a user would: the wizard filled, the review's file and command, the deploy
// followed to its end (every step done, "Management cluster created!" in the log, the next
// commands), and a reload after it that shows the whole log again.
//
// Usage: node management.mjs URL SCREENSHOT_DIR NAME
// It prints what it checked and exits 1 on the first check that fails.
import { check, launch } from "./browser.mjs";

const [url, shots, name] = process.argv.slice(2);
if (!name) {
  console.error("usage: node management.mjs URL SCREENSHOT_DIR NAME");
  process.exit(2);
}

const browser = await launch();
try {
  const page = await browser.newPage();
  await page.goto(url);
  await page.check("input[name=INFRASTRUCTURE_PROVIDER][value=local]");
  await page.fill("#CLUSTER_NAME", name);
  await page.fill("#WORKER_MACHINE_COUNT", "1");
  await page.focus("#CLUSTER_CIDR");
  await page.click("#review-button");
  await page.waitForSelector("#review", { state: "visible" });
  const command = await page.textContent("#review-command");
  const file = await page.textContent("#review-file");
  check(new RegExp("^slipway management-cluster create -f \\S+/clusterconfigs/" + name + "\\.yaml$").test(command), "the command: " + command);
  check(file.includes("CLUSTER_NAME: " + name) && file.includes("INFRASTRUCTURE_PROVIDER: local"), "the file:\n" + file);
  await page.screenshot({ path: shots + "/m1-review.png", fullPage: true });

  await page.click("#deploy-button");
  await page.waitForSelector("#deploy", { state: "visible" });
  // A screenshot while it runs, once the first step is under way.
  await page.waitForFunction(() => document.querySelectorAll("#deploy-steps li").length > 0, null, { timeout: 60000 });
  await page.screenshot({ path: shots + "/m2-deploying.png", fullPage: true });
  await page.waitForFunction(() => !["Deploying…", "Not started"].includes(document.querySelector("#deploy-state").textContent), null,
    { timeout: 15 * 60 * 1000, polling: 1000 });
  const state = await page.textContent("#deploy-state");
  const log = await page.textContent("#deploy-log");
  await page.screenshot({ path: shots + "/m3-created.png", fullPage: true });
  check(state === "Cluster created", "the deploy's state: " + state + "\n" + (await page.textContent("#failure-text")) + "\n" + log);
  check(log.startsWith("Logs of the command execution can also be found at: ") && log.includes("Management cluster created!"),
    "the log, from its first line to the end:\n" + log);
  const steps = await page.$$eval("#deploy-steps li", (lis) => lis.map((li) => li.className + " " + li.textContent));
  check(steps.length >= 3 && steps.every((s) => s.startsWith("done ")), "every step done, with its time: " + steps.join(" | "));
  const next = await page.textContent("#next-commands");
  check(next.includes("slipway cluster create"), "the next commands: " + next);

  // A reload after the end shows the whole log and the result again.
  await page.reload();
  await page.waitForFunction((n) => document.querySelector("#deploy-log").textContent.length >= n, log.length, { timeout: 20000 });
  check((await page.textContent("#deploy-log")) === log && (await page.textContent("#deploy-state")) === "Cluster created", "the reloaded page shows the same log and result");
} finally {
  await browser.close();
}
