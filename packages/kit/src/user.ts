// The signed-in person as the kit gives them to the app: what /auth/me and /auth/token answer,
// `getSession` returns and `onLogin` receives.

import { IDENTITY_ITEMS, type IdentityItem, type YN } from "./core/spec.js";
import type { SessionRecord, StoredIdentity } from "./storage.js";

/** What /auth/me and /auth/token answer (docs/architecture.md §4.7): flat, the spec's item names, decrypted. */
export type KitUser = { plid: string; autoLoginYn?: YN; autoStatusCheck?: YN; loginAt: string } & Partial<
  Record<IdentityItem, string>
>;

/** The person of a session: its stored identity's items, then the session's flags and login time. */
export function flatUser(identity: StoredIdentity, session: SessionRecord): KitUser {
  const user: Record<string, string> = { plid: identity.plid };
  for (const item of IDENTITY_ITEMS) {
    const v = identity.items[item];
    if (v !== undefined) user[item] = v;
  }
  if (session.autoLoginYn) user.autoLoginYn = session.autoLoginYn;
  if (session.autoStatusCheck) user.autoStatusCheck = session.autoStatusCheck;
  user.loginAt = new Date(session.loginAt).toISOString();
  return user as KitUser;
}
