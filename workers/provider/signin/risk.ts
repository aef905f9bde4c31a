// The number's risk window at a proof (docs/security.md "SIM changes and ports"), read by the
// identify step and by a text the person sent.

import { riskUntil, passkeysOf } from "../store/directory/index";
import { storeConfig } from "../store/config";
import type { ConfirmedSubscriber } from "./carrier";
import type { Flow } from "./flow";

/**
 * The number's risk window (store/directory/risk.ts): null when none is open, else when it ends and
 * whether the person has a passkey that signs in now (they must use it). The passkeys are read only
 * when a window is open.
 */
export async function riskOf(f: Flow, c: ConfirmedSubscriber): Promise<{ until: number; passkey: boolean } | null> {
  const until = riskUntil(c.riskFrom, storeConfig(f.env).riskWindowMs);
  if (until === null) return null;
  const now = Date.now();
  return { until, passkey: (await passkeysOf(f.env, c.subscriber.id)).some((k) => k.usableAt <= now) };
}
