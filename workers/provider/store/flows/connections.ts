// A person's connections as their /account page lists them: a read over two stores, their links
// in their home shard with the names of the apps in D1 `clients` (a deleted client's are left out).

import { maskItems, homeOfId, type DirectoryEnv, dirAt } from "../directory/index";
import type { IdentityItem } from "../../../core/spec";
import { clientNames } from "../clients";

/** One of the person's connections, as their /account page shows it. */
export interface Connection {
  clientId: string;
  appName: string;
  items: IdentityItem[];
  connectedAt: number;
  lastLoginAt: number | null;
  /** When automatic login ends (the latest live grant), or null when it is off. */
  autoLoginUntil: number | null;
}

/** Every app the subscriber is connected to, by app name (links of a deleted client are not shown). */
export async function connectionsOf(
  env: DirectoryEnv & { DB: D1Database },
  subscriberId: number,
): Promise<Connection[]> {
  const rows = await dirAt(env, homeOfId(subscriberId)).connections(subscriberId);
  if (rows.length === 0) return [];
  const names = await clientNames(
    env,
    rows.map((r) => r.client_id),
  );
  return rows
    .filter((r) => names.has(r.client_id))
    .map((r) => ({
      clientId: r.client_id,
      appName: names.get(r.client_id)!,
      items: maskItems(r.items),
      connectedAt: r.connected_at,
      lastLoginAt: r.last_login_at,
      autoLoginUntil: r.auto_until,
    }))
    .sort((a, b) => (a.appName < b.appName ? -1 : a.appName > b.appName ? 1 : a.clientId < b.clientId ? -1 : 1));
}
