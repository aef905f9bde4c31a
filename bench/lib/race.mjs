// The race: one code, `concurrency` redemptions sent at once, `trials` times, for the project's
// token route, its floor and each peer. A token service that is atomic has exactly one winner (one
// 200 with a token) in every trial; the others must all be refused with the service's own error
// answer (a JSON `error`: for ours 500 `server_error`, the reference's answer to an invalid code,
// or 400 `invalid_grant` in the RFC 6749 style). Any other answer (an unhandled 500, a 200 without
// a token) is counted apart. Peers are reported as measured.

import { control } from "./scenarios.mjs";
import { urlFor } from "./scenarios.mjs";

/** Which scenarios race (their pools mint the codes; their requests are the redemptions). */
export const RACERS = [
  { id: "token-route", mustBeAtomic: true },
  { id: "token", mustBeAtomic: true },
  { id: "floor-token", mustBeAtomic: true },
  { id: "peer-wop", mustBeAtomic: false },
  { id: "peer-openauth", mustBeAtomic: false },
];

/**
 * One answer of a race: "won" (200 with an access_token), "refused" (an error status with the
 * service's JSON `error`) or "other" (anything else: an unhandled 500, a 200 without a token).
 * @param {number} status
 * @param {string} body
 * @returns {"won" | "refused" | "other"}
 */
export function classify(status, body) {
  let parsed = null;
  try {
    parsed = JSON.parse(body);
  } catch {}
  if (status === 200 && typeof parsed?.access_token === "string") return "won";
  if (status >= 400 && typeof parsed?.error === "string") return "refused";
  return "other";
}

/**
 * @param {any} s  the scenario (bench/lib/scenarios.mjs) whose pool and request are used
 * @param {any} ctx
 * @param {{ trials: number; concurrency: number }} o
 */
export async function race(s, ctx, { trials, concurrency }) {
  await s.prepare(ctx, trials);
  const winners = [];
  let refused = 0;
  let other = 0;
  let otherStatus = null;
  for (let t = 0; t < trials; t++) {
    const r = {
      method: s.request.method,
      path: s.request.path,
      headers: { ...(s.request.headers ?? {}) },
      body: s.request.body,
    };
    s.request.setup(r); // takes one fresh code
    const url = urlFor(ctx, s) + r.path;
    const statuses = await Promise.all(
      Array.from({ length: concurrency }, async () => {
        const res = await control(url, { method: r.method, headers: r.headers, body: r.body, redirect: "manual" });
        return { status: res.status, kind: classify(res.status, await res.text()) };
      }),
    );
    winners.push(statuses.filter((x) => x.kind === "won").length);
    refused += statuses.filter((x) => x.kind === "refused").length;
    other += statuses.filter((x) => x.kind === "other").length;
    otherStatus ??= statuses.find((x) => x.kind === "other")?.status ?? null;
  }
  return {
    id: s.id,
    title: s.title,
    trials,
    concurrency,
    winners,
    exactlyOne: winners.filter((w) => w === 1).length,
    moreThanOne: winners.filter((w) => w > 1).length,
    none: winners.filter((w) => w === 0).length,
    maxWinners: Math.max(...winners),
    refused,
    /** Answers that are neither a token nor the service's error (none for an atomic service). */
    other,
    otherStatus,
  };
}
