// One code exchange per login, even when its callback (or /auth/token) arrives twice: a double
// click, a prefetch, a retried request (docs/rp-kit.md "Duplicated callbacks"). The service's code
// is single use and a replay revokes the token the first exchange got, so a duplicate that also
// exchanged would leave nobody logged in. The first request claims the redemption; a duplicate
// waits for the first one's outcome and follows it (the same session, the same refusal).
//
// Within one isolate (where a browser's two requests usually land) the claim is exact: an
// in-memory map of redemptions in flight. Across isolates the claim is a KV record, written, left
// to settle, and read back, so that of two near-simultaneous writers only the last proceeds. KV
// has no compare-and-set and shows a write elsewhere only after up to 60 s, so across isolates and
// locations this is best effort; the service's single-use code stays the backstop.
//
// With the kit's Durable Object store (RP_STORE, login-store.ts) the claim is exact everywhere: one
// call claims or finds the claim, and duplicates poll its outcome there.

import { randomToken } from "./core/crypto.js";
import type { RpEnv } from "./config.js";
import { storeAt, type ClaimResult, type PhoneLoginStore } from "./login-store.js";
import {
  getOutcome,
  getRedemption,
  putOutcome,
  putRedemption,
  REDEMPTION_TTL_SECONDS,
  type RedeemOutcome,
  type Redemption,
} from "./store.js";

/** Time for a concurrent claim of another isolate to land before ours is read back. */
const SETTLE_MS = 30;
/** How often a duplicate looks for the first request's outcome. */
const POLL_MS = 25;

const inFlight = new Map<string, { proofHash: string; run: Promise<RedeemOutcome> }>();

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface Redeemed {
  outcome: RedeemOutcome;
  /** False for a duplicate, which must answer from the first request's outcome. */
  first: boolean;
}

/** A duplicate's wait for the claimer's outcome; the service's failure when it never comes. */
async function follow(env: RpEnv, keyHash: string, deadline: number): Promise<RedeemOutcome> {
  for (;;) {
    const outcome = await getOutcome(env, keyHash);
    if (outcome) return outcome;
    if (Date.now() >= deadline || !(await getRedemption(env, keyHash))) return { kind: "failed", failure: "upstream" };
    await sleep(POLL_MS);
  }
}

/** What a request that does not share the claimer's proof gets: the refusal of a reused code. */
const NOT_YOURS: Redeemed = { outcome: { kind: "failed", failure: "invalid_code" }, first: false };

/**
 * Runs `work` once for the redemption `keyHash` (a hash of the state or of the code); a duplicate
 * that proves what the first request proved (`claim.proofHash`: the binding cookie; the code's
 * verifier) gets the first request's outcome, anyone else the refusal of a reused code.
 * `waitMs` bounds a duplicate's wait.
 */
/** How long the store keeps a claim for its duplicates: as KV keeps one, or as long as they may wait. */
export const claimExpiry = (waitMs: number) => Date.now() + Math.max(REDEMPTION_TTL_SECONDS * 1000, waitMs);

/**
 * A claim made in the store (`claimState`, `claim`) carried out: the first request does `work` and
 * settles its outcome for the duplicates; a duplicate follows that outcome until `deadline`.
 */
export async function followClaim(
  stub: DurableObjectStub<PhoneLoginStore>,
  keyHash: string,
  claim: Exclude<ClaimResult, { kind: "refused" }>,
  deadline: number,
  work: () => Promise<RedeemOutcome>,
): Promise<RedeemOutcome> {
  if (claim.kind === "duplicate") {
    let outcome = claim.outcome;
    while (outcome === null && Date.now() < deadline) {
      await sleep(POLL_MS);
      const now = await stub.outcome(keyHash);
      if (now === undefined) break;
      outcome = now;
    }
    return outcome !== null ? (JSON.parse(outcome) as RedeemOutcome) : { kind: "failed", failure: "upstream" };
  }
  let outcome: RedeemOutcome = { kind: "failed", failure: "upstream" };
  try {
    outcome = await work();
    return outcome;
  } finally {
    // for duplicates only: a failed write leaves them to time out, never this login
    await stub.settle(keyHash, JSON.stringify(outcome)).catch(() => {});
  }
}

export async function redeemOnce(
  env: RpEnv,
  keyHash: string,
  claim: Omit<Redemption, "owner">,
  waitMs: number,
  work: () => Promise<RedeemOutcome>,
): Promise<Redeemed> {
  if (env.RP_STORE) {
    const stub = storeAt(env.RP_STORE, keyHash);
    const got = await stub.claim(keyHash, claim.proofHash, claimExpiry(waitMs));
    if (got.kind === "refused") return NOT_YOURS;
    return { outcome: await followClaim(stub, keyHash, got, Date.now() + waitMs, work), first: got.kind === "first" };
  }
  const local = inFlight.get(keyHash);
  if (local) return local.proofHash === claim.proofHash ? { outcome: await local.run, first: false } : NOT_YOURS;
  let first = false;
  let foreign = false;
  const run = (async (): Promise<RedeemOutcome> => {
    const deadline = Date.now() + waitMs;
    const existing = await getRedemption(env, keyHash);
    if (existing) {
      foreign = existing.proofHash !== claim.proofHash;
      return foreign ? NOT_YOURS.outcome : follow(env, keyHash, deadline);
    }
    const owner = randomToken(16);
    await putRedemption(env, keyHash, { ...claim, owner });
    await sleep(SETTLE_MS);
    if ((await getRedemption(env, keyHash))?.owner !== owner) return follow(env, keyHash, deadline);
    first = true;
    let outcome: RedeemOutcome = { kind: "failed", failure: "upstream" };
    try {
      outcome = await work();
      return outcome;
    } finally {
      // for duplicates only: a failed write leaves them to time out, never this login
      await putOutcome(env, keyHash, outcome).catch(() => {});
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
