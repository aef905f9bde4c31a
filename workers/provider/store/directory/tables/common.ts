// What a directory shard's table modules share: the rows they hand each other and their callers,
// and the one way they bind a list of keys.

import type { IdentityItem } from "../../../../core/spec";
import { maskItems } from "../keys";

/** A person's row as the shard returns it. */
export type SubscriberRow = {
  id: number;
  ci: string;
  telco: "S" | "K" | "L";
  phone: string;
  name: string;
  gender: "M" | "F";
  birth: string;
  foreign_cd: "L" | "F";
  test_otp_hash: string | null;
  test_clients: string | null;
  test_expires_at: number | null;
  created_at: number;
  /** The carrier's risk signals (../risk.ts), epoch ms; null until one came. */
  sim_changed_at: number | null;
  sim_change_kind: "person" | "carrier" | null;
  ported_at: number | null;
};

/** The directory fields an import or a registration writes. */
export interface SubscriberFields {
  telco: string;
  phone: string;
  name: string;
  gender: string;
  birth: string;
  foreign: string;
  ci: string;
}

/** A link as stored: its items decoded. */
export interface LinkRow {
  plid: string;
  items: IdentityItem[];
  consentedAt: number;
}

/** A link's columns as stored, decoded. */
export function linkRow(r: { plid: string; items: number; consented_at: number }): LinkRow {
  return { plid: r.plid, items: maskItems(r.items), consentedAt: r.consented_at };
}

/** A link as its end needs it. */
export type EndableLink = {
  client_id: string;
  plid: string;
  subscriber_id: number;
};

/** Rows of `select` (ending in the key column) whose key is one of `values`, bound as one JSON parameter. */
export function rowsIn<T extends Record<string, SqlStorageValue>>(
  sql: SqlStorage,
  select: string,
  values: readonly unknown[],
): T[] {
  return sql.exec<T>(`${select} IN (SELECT value FROM json_each(?))`, JSON.stringify(values)).toArray();
}
