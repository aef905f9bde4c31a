// One error renderer (docs/architecture.md §4.1): unexpected failures and bad configuration become the fixed
// server_error body; the precise reason goes only to the log line.
import { env } from "../support/env";
import { afterEach, describe, expect, it, vi } from "vitest";
import tokenWorker from "../../workers/provider/token/index";
import { basic, DEMO, FORM, form, HONG, mintFor } from "../support/helpers";
import { forgetClient } from "../../workers/provider/store/clients";

const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;

function tokenRequest(code: string): Request {
  return new Request("http://localhost/oauth2/token", {
    method: "POST",
    headers: { ...FORM, Authorization: basic(DEMO.clientId, DEMO.secret) },
    body: form({ grant_type: "authorization_code", code }),
  });
}

afterEach(() => {
  vi.restoreAllMocks();
  forgetClient(DEMO.clientId);
});

describe("server_error (spec §7)", () => {
  it("an unexpected failure (a client secret that no longer unseals) is the fixed 500 body, with the reason only in the log", async () => {
    const { code } = await mintFor(HONG.phone);
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    forgetClient(DEMO.clientId);
    const wrongKey = { ...env, SEAL_KEY: btoa("x".repeat(32)), LOG_REQUESTS: "true" };
    const res = await tokenWorker.fetch!(tokenRequest(code) as never, wrongKey, ctx);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: "server_error", message: "A temporary error occurred. Retry later." });
    const line = JSON.parse(log.mock.calls.at(-1)![0] as string) as Record<string, unknown>;
    expect(line).toMatchObject({ worker: "token", route: "/oauth2/token", status: 500 });
    expect(String(line.cause)).toMatch(/OperationError|decrypt/i);
    expect(JSON.stringify(line)).not.toContain(code);
    expect(JSON.stringify(line)).not.toContain(DEMO.secret);
  });

  it("a malformed variable answers the fixed server_error and the log line names the variable", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const bad = { ...env, CODE_TTL_SECONDS: "sixty", LOG_REQUESTS: "true" };
    const res = await tokenWorker.fetch!(tokenRequest("x") as never, bad, ctx);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: "server_error", message: "A temporary error occurred. Retry later." });
    const line = JSON.parse(log.mock.calls.at(-1)![0] as string) as Record<string, unknown>;
    expect(String(line.cause)).toContain("CODE_TTL_SECONDS");
  });
});
