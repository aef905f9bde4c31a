// Debian's Chromium through playwright-core, as every browser test launches it: headless, no
// sandbox (CI runs as root), no background traffic. `args` adds flags (a host-resolver rule).
import { chromium, type Browser } from "playwright-core";

export function launchChromium(args: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      ...args,
    ],
  });
}
