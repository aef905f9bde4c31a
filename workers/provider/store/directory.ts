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

export async function subscriberByPhone(
  env: DbEnv,
  phone: string,
): Promise<(Subscriber & { testOtpHash: string | null }) | null> {
  const r = await env.DB.prepare("SELECT * FROM subscribers WHERE phone = ?")
    .bind(phone)
    .first<SubscriberRow & { test_otp_hash: string | null }>();
  return r ? { ...toSubscriber(r), testOtpHash: r.test_otp_hash } : null;
}
