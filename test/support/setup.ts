import { exports } from "cloudflare:workers";
import { env } from "./env";
import { startFresh } from "./fresh";
import { BASE } from "./helpers";
import { fakeFor } from "./sms-fakes";
import { TURNSTILE_ORIGIN } from "./turnstile";

// Every file starts as on a fresh workerd, from the migrated schema and the dev seed (./fresh.ts).
await startFresh();

/** The fake carrier verification API's address (test/support/fixtures/fake-carrier.js). */
const FAKE_CARRIER_ORIGIN = "http://127.0.0.1:9753";

/** `answer`, or the signal's reason once it aborts first (a caller's timeout ends its wait). */
function untilAborted(answer: Promise<Response>, signal: AbortSignal | null | undefined): Promise<Response> {
  if (!signal) return answer;
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    answer.then(resolve, reject);
  });
}

// The tests' network: the dev worker's own address (where the seed's demo-client sends its signed
// events, docs/events.md) is served in process by the worker, as `npm start` serves it; the SMS
// providers' fakes, the fake carrier API and Turnstile's fake answer at their loopback origins; any other outbound
// fetch is refused. A test that stands in for a receiver or a gateway spies on this.
globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  const req = new Request(input, init);
  if (new URL(req.url).origin === BASE) return exports.default.fetch(req);
  const fake = fakeFor(req.url);
  if (fake) return fake.fetch(req);
  if (new URL(req.url).origin === FAKE_CARRIER_ORIGIN) return untilAborted(env.FAKE_CARRIER.fetch(req), init?.signal);
  if (new URL(req.url).origin === TURNSTILE_ORIGIN) return untilAborted(env.TURNSTILE_FAKE.fetch(req), init?.signal);
  throw new TypeError(`outbound fetch refused in tests: ${new URL(req.url).origin}`);
};
