// Follows a deploy that fails after its bootstrap cluster was made, in Debian's Chromium,
// headless, and takes both ways out as a user would: the failure names its step and cause with
// the resume and clean-up buttons; resume runs the flow again on the kept bootstrap cluster,
// and, failing again, keeps both ways out; clean-up deletes the bootstrap cluster and says so in
// the log, and the buttons go.
//
// Usage: node waysout.mjs URL SCREENSHOT_DIR NAME
// It prints what it checked and exits 1 on the first check that fails.
import { check, launch } from "./browser.mjs";

const [url, shots, name] = process.argv.slice(2);
if (!name) {
  console.error("usage: node waysout.mjs URL SCREENSHOT_DIR NAME");
  process.exit(2);
}

// failed waits until the deploy failed with its log holding want.
async function failed(page, want) {
  await page.waitForFunction((w) => document.querySelector("#deploy-state").textContent === "The deploy failed" &&
    document.querySelector("#deploy-log").textContent.includes(w), want, { timeout: 5 * 60 * 1000, polling: 500 });
}

const browser = await launch();
try {
  const page = await browser.newPage();
  await page.goto(url);
  await page.check("input[name=INFRASTRUCTURE_PROVIDER][value=local]");
  await page.fill("#CLUSTER_NAME", name);
  await page.focus("#CLUSTER_CIDR");
  await page.click("#review-button");
  await page.waitForSelector("#review", { state: "visible" });
  await page.click("#deploy-button");
  await failed(page, "Error: ");
  const cause = await page.textContent("#failure-text");
  check(cause.startsWith("Step bootstrap cluster: "), "the failure names its step and cause: " + cause);
  check(await page.isVisible("#resume-button") && await page.isVisible("#cleanup-button"), "both ways out are offered");
  await page.screenshot({ path: shots + "/f1-failed.png", fullPage: true });

  await page.click("#resume-button");
  await failed(page, "Using the bootstrap cluster of ");
  const resumedLog = await page.textContent("#deploy-log");
  check(await page.isVisible("#resume-button") && await page.isVisible("#cleanup-button"), "the resumed run failed again, keeping both ways out:\n" + resumedLog);
  await page.screenshot({ path: shots + "/f2-resumed.png", fullPage: true });

  await page.click("#cleanup-button");
  await failed(page, "Deleted bootstrap cluster tkg-kind-");
  check(await page.isHidden("#resume-button") && await page.isHidden("#cleanup-button"), "no way out is offered once the bootstrap cluster is gone");
  await page.screenshot({ path: shots + "/f3-cleaned-up.png", fullPage: true });
  console.log("--- deploy log\n" + (await page.textContent("#deploy-log")) + "\n--- end of deploy log");
} finally {
  await browser.close();
}
