// The fake carrier verification API (test/support/fixtures/fake-carrier.js) as the tests drive it:
// its address, the variables that make it the sign-in's directory, and its control endpoints.
import { expect } from "vitest";
import { env } from "./env";

export const CARRIER = "http://127.0.0.1:9753";
/** The fake carrier's secret (vitest.config.ts). */
export const CARRIER_SECRET = "carrier-test-secret-0123456789abcdefABCDEF";

/** The variables that make the fake the sign-in's directory (a short timeout: the fake answers at once). */
export const CARRIER_VARS = {
  CARRIER_DIRECTORY: "http",
  CARRIER_API_URL: `${CARRIER}/verify`,
  CARRIER_API_SECRET: CARRIER_SECRET,
  CARRIER_API_TIMEOUT_MS: "400",
};

/** A control request to the fake (`/_carrier/...`): GET without a body, else POST of its JSON. */
export async function carrierControl(path: string, body?: unknown): Promise<unknown> {
  const res = await env.FAKE_CARRIER.fetch(`${CARRIER}${path}`, {
    method: body === undefined ? "GET" : "POST",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return res.json();
}
