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
