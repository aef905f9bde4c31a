// A text's phrase in the number's object (docs/signin.md "A text the person sends"): offered,
// taken and given back against the number's sends of the window, which its codes share
// (signin-store.ts `takeSend`): a text that proves a number takes a send, as a code does, so its
// holder's texts are capped as its codes are, and a bot's own SIMs with them.

import { SIGNIN_COUNTERS as K } from "./keys";
import type { NumberLimits, Refusal } from "./signin-store";
import type { Entries } from "./tables/entries";

/**
 * The phrase stored under `key` (waiting as `value` for `ttlMs`), unless the number's sends of the
 * window are spent. Only the number's holder can spend them so: an offer takes nothing.
 */
export function offerText(
  entries: Entries,
  key: string,
  value: string,
  ttlMs: number,
  phoneKey: string,
  limits: NumberLimits,
): Refusal | null {
  const [sends] = entries.peek([K.sends(phoneKey)]);
  if (sends!.count >= limits.sendsPerWindow) return { limit: "sends", until: sends!.windowEnd };
  entries.put(key, value, ttlMs);
  return null;
}

/** Takes an arrived phrase (`expected` → `value`) with a send of the number's window; false when another took it. */
export function takeText(
  entries: Entries,
  key: string,
  expected: string,
  value: string,
  phoneKey: string,
  limits: NumberLimits,
): boolean {
  if (!entries.swap(key, expected, value)) return false;
  entries.hit(K.sends(phoneKey), limits.sendWindowMs);
  return true;
}

/** Gives a taken phrase back (`taken` → `value`) and its send, when nothing was learned from it. */
export function untakeText(
  entries: Entries,
  key: string,
  taken: string,
  value: string,
  phoneKey: string,
  limits: NumberLimits,
): void {
  if (entries.swap(key, taken, value) && entries.peek([K.sends(phoneKey)])[0]!.count > 0)
    entries.hit(K.sends(phoneKey), limits.sendWindowMs, -1);
}
