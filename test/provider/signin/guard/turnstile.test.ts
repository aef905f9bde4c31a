// The challenge's server side (docs/signin.md "The challenge"): a Turnstile token is checked with
// siteverify (here its faithful fake) for the page's action and host. What must hold: only a token
// solved for this action on this host passes, once; a forged, replayed, expired or foreign token
// is refused; siteverify failing or not answering in time is "unavailable", never a pass.
import { afterEach, describe, expect, it, vi } from "vitest";
import { siteverify } from "../../../../workers/provider/signin/turnstile";
import { age, CONFIG, siteverifyMode, solve } from "../../../support/turnstile";

const HOST = "login.example.com";
const want = { action: "identify", hostname: HOST, remoteIp: "198.51.100.7" };

afterEach(async () => {
  vi.restoreAllMocks();
  await siteverifyMode("ok");
});

describe("siteverify", () => {
  it("passes a token solved for this action and host, once: a replay is refused", async () => {
    const token = await solve("identify", HOST);
    expect(await siteverify(CONFIG, token, want)).toBe("passed");
    expect(await siteverify(CONFIG, token, want)).toBe("refused");
  });

  it("refuses a forged token, a token of another action, host or site, and none at all (without a call)", async () => {
    expect(await siteverify(CONFIG, "0.fake.forged", want)).toBe("refused");
    expect(await siteverify(CONFIG, await solve("verify", HOST), want)).toBe("refused");
    expect(await siteverify(CONFIG, await solve("identify", "evil.example"), want)).toBe("refused");
    expect(await siteverify(CONFIG, await solve("identify", HOST, "1x0000000000000000OTHER"), want)).toBe("refused");
    const calls = vi.spyOn(globalThis, "fetch");
    expect(await siteverify(CONFIG, "", want)).toBe("refused");
    expect(await siteverify(CONFIG, null, want)).toBe("refused");
    expect(await siteverify(CONFIG, "x".repeat(2049), want)).toBe("refused");
    expect(calls).not.toHaveBeenCalled();
  });

  it("refuses a token sent with the wrong secret", async () => {
    const token = await solve("identify", HOST);
    expect(await siteverify({ ...CONFIG, secretKey: "not-the-secret" }, token, want)).toBe("refused");
  });

  it("refuses a token solved more than 300 seconds ago", async () => {
    const token = await solve("identify", HOST);
    await age(token, 301_000);
    expect(await siteverify(CONFIG, token, want)).toBe("refused");
    const fresh = await solve("identify", HOST);
    await age(fresh, 299_000);
    expect(await siteverify(CONFIG, fresh, want)).toBe("passed");
  });

  it("is unavailable, never passed, when siteverify fails, reports its own error or does not answer in time", async () => {
    await siteverifyMode("fail", 1);
    expect(await siteverify(CONFIG, await solve("identify", HOST), want)).toBe("unavailable");
    await siteverifyMode("internal-error", 1);
    expect(await siteverify(CONFIG, await solve("identify", HOST), want)).toBe("unavailable");
    await siteverifyMode("hang", 1);
    const started = Date.now();
    expect(await siteverify({ ...CONFIG, timeoutMs: 200 }, await solve("identify", HOST), want)).toBe("unavailable");
    expect(Date.now() - started).toBeLessThan(5_000);
    // and a good token after all that still passes
    expect(await siteverify(CONFIG, await solve("identify", HOST), want)).toBe("passed");
  });
});
