// The carrier directory in D1 (the dev seed and the admin import fill it): one row per subscriber.

import type { Telco } from "../../core/spec";

export interface Subscriber {
  id: number;
  telco: Telco;
  phone: string;
  name: string;
  gender: "M" | "F";
  birth: string; // YYYY-MM-DD
  foreign: "L" | "F";
  ci: string;
}

export interface SubscriberRow {
  id: number;
  telco: "S" | "K" | "L";
  phone: string;
  name: string;
  gender: "M" | "F";
  birth: string;
  foreign_cd: "L" | "F";
  ci: string;
}

type DbEnv = { DB: D1Database };

export function toSubscriber(r: SubscriberRow): Subscriber {
  return {
    id: r.id,
    telco: r.telco,
    phone: r.phone,
    name: r.name,
    gender: r.gender,
    birth: r.birth,
    foreign: r.foreign_cd,
    ci: r.ci,
  };
}

export async function subscriberById(env: DbEnv, id: number): Promise<Subscriber | null> {
  const r = await env.DB.prepare("SELECT * FROM subscribers WHERE id = ?").bind(id).first<SubscriberRow>();
  return r ? toSubscriber(r) : null;
}

/**
 * A test number registered for app review: it signs in only for these clients, until `expiresAt`
 * (docs/operations.md "Test numbers"). The dev seed's test numbers have none.
 */
export interface ReviewRestriction {
  clients: string[];
  expiresAt: number;
}

export async function subscriberByPhone(
  env: DbEnv,
  phone: string,
): Promise<(Subscriber & { testOtpHash: string | null; review: ReviewRestriction | null }) | null> {
  const r = await env.DB.prepare("SELECT * FROM subscribers WHERE phone = ?")
    .bind(phone)
    .first<
      SubscriberRow & { test_otp_hash: string | null; test_clients: string | null; test_expires_at: number | null }
    >();
  if (!r) return null;
  const review =
    r.test_clients !== null
      ? { clients: JSON.parse(r.test_clients) as string[], expiresAt: r.test_expires_at ?? 0 }
      : null;
  return { ...toSubscriber(r), testOtpHash: r.test_otp_hash, review };
}
