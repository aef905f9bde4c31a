// One code exchange per login in KV alone, even when its callback (or /auth/token) arrives twice: a
// double click, a prefetch, a retried request (docs/rp-kit.md "Duplicated callbacks"). The service's
// code is single use and a replay revokes the token the first exchange got, so a duplicate that
// also exchanged would leave nobody logged in. The first request claims the redemption; a duplicate
// waits for the first one's outcome and follows it (the same session, the same refusal).
//
// Within one isolate (where a browser's two requests usually land) the claim is exact: an
// in-memory map of redemptions in flight. Across isolates the claim is a KV record, written, left
// to settle, and read back, so that of two near-simultaneous writers only the last proceeds. KV
// has no compare-and-set and shows a write elsewhere only after up to 60 s, so across isolates and
// locations this is best effort; the service's single-use code stays the backstop. The kit's
// Durable Object store claims in one call instead (login-store.ts).

import { randomToken } from "./core/crypto.js";
import { KEY } from "./kv.js";
import { NOT_YOURS, POLL_MS, REDEMPTION_TTL_SECONDS, type RedeemOutcome, type Redeemed } from "./storage.js";

/** A claim in KV. Holds no secret. */
export interface Redemption {
  /** A random tag of the request that claimed it. */
  owner: string;
  /** What a duplicate must prove it shares with the claimer (SHA-256 of the binding cookie, of the verifier). */
  proofHash: string;
  /** The callback's destination (a duplicate may arrive after the state ended). */
  returnTo?: string;
}

/** Time for a concurrent claim of another isolate to land before ours is read back. */
const SETTLE_MS = 30;

const inFlight = new Map<string, { proofHash: string; run: Promise<RedeemOutcome> }>();

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function getRedemption(kv: KVNamespace, keyHash: string): Promise<Redemption | null> {
  return kv.get<Redemption>(KEY.redemption(keyHash), "json");
}

async function putRedemption(kv: KVNamespace, keyHash: string, r: Redemption): Promise<void> {
  await kv.put(KEY.redemption(keyHash), JSON.stringify(r), { expirationTtl: REDEMPTION_TTL_SECONDS });
}

/**
 * The outcome lives under a key of its own: KV refuses a second write to one key within a second
 * (429), and the outcome follows the claim by the length of one exchange.
 */
async function getOutcome(kv: KVNamespace, keyHash: string): Promise<RedeemOutcome | null> {
  return kv.get<RedeemOutcome>(KEY.redemptionOutcome(keyHash), "json");
}

async function putOutcome(kv: KVNamespace, keyHash: string, outcome: RedeemOutcome): Promise<void> {
  await kv.put(KEY.redemptionOutcome(keyHash), JSON.stringify(outcome), {
    expirationTtl: REDEMPTION_TTL_SECONDS,
  });
}

/** A duplicate's wait for the claimer's outcome; the service's failure when it never comes. */
async function follow(kv: KVNamespace, keyHash: string, deadline: number): Promise<RedeemOutcome> {
  for (;;) {
    const outcome = await getOutcome(kv, keyHash);
    if (outcome) return outcome;
    if (Date.now() >= deadline || !(await getRedemption(kv, keyHash))) return { kind: "failed", failure: "upstream" };
    await sleep(POLL_MS);
  }
}

/**
 * Runs `work` once for the redemption `keyHash` (a hash of the state or of the code); a duplicate
 * that proves what the first request proved (`claim.proofHash`: the binding cookie; the code's
 * verifier) gets the first request's outcome, anyone else the refusal of a reused code.
 * `waitMs` bounds a duplicate's wait.
 */
export async function redeemOnce(
  kv: KVNamespace,
  keyHash: string,
  claim: Omit<Redemption, "owner">,
  waitMs: number,
  work: () => Promise<RedeemOutcome>,
): Promise<Redeemed> {
  const local = inFlight.get(keyHash);
  if (local) return local.proofHash === claim.proofHash ? { outcome: await local.run, first: false } : NOT_YOURS;
  let first = false;
  let foreign = false;
  const run = (async (): Promise<RedeemOutcome> => {
    const deadline = Date.now() + waitMs;
    const existing = await getRedemption(kv, keyHash);
    if (existing) {
      foreign = existing.proofHash !== claim.proofHash;
      return foreign ? NOT_YOURS.outcome : follow(kv, keyHash, deadline);
    }
    const owner = randomToken(16);
    await putRedemption(kv, keyHash, { ...claim, owner });
    await sleep(SETTLE_MS);
    if ((await getRedemption(kv, keyHash))?.owner !== owner) return follow(kv, keyHash, deadline);
    first = true;
    let outcome: RedeemOutcome = { kind: "failed", failure: "upstream" };
    try {
      outcome = await work();
      return outcome;
    } finally {
      // for duplicates only: a failed write leaves them to time out, never this login
      await putOutcome(kv, keyHash, outcome).catch(() => {});
    }
  })();
  inFlight.set(keyHash, { proofHash: claim.proofHash, run });
  try {
    const outcome = await run;
    return foreign ? NOT_YOURS : { outcome, first };
  } finally {
    inFlight.delete(keyHash);
  }
}
