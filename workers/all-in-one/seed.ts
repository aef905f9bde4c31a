// The dev seed (README "Dev seed"): two clients and four test subscribers with fixed one-time
// codes. Loaded only where DEV_MODE is on; tests and tools rely on these exact values.

import { sha256 } from "../core/crypto";
import { IDENTITY_ITEMS, type IdentityItem } from "../core/spec";
import { sealSecret } from "../provider/store/clients";

export interface SeedClient {
  clientId: string;
  secret: string;
  name: string;
  redirectUris: string[];
  items: IdentityItem[];
  autoLogin: boolean;
  /** Where its signed events go (docs/events.md): the demo app's own kit. */
  eventsUri: string | null;
}

export interface SeedSubscriber {
  telco: "S" | "K" | "L";
  phone: string;
  name: string;
  gender: "M" | "F";
  birth: string;
  foreign: "L" | "F";
  ci: string;
  code: string;
}

export const SEED_CLIENTS: readonly SeedClient[] = [
  {
    clientId: "demo-client",
    secret: "demoSecret0123456789abcdefABCDEF",
    name: "Demo Shop",
    redirectUris: [
      "http://localhost:8787/auth/callback",
      "http://127.0.0.1:8787/auth/callback",
      "https://demo.example/callback",
      "demoapp://callback",
    ],
    items: [...IDENTITY_ITEMS],
    autoLogin: true,
    eventsUri: "http://localhost:8787/auth/events",
  },
  {
    clientId: "limited-client",
    secret: "limitedSecret0123456789abcdefABC",
    name: "Limited App",
    redirectUris: ["https://limited.example/cb"],
    items: ["gender", "agegroup"],
    autoLogin: false,
    eventsUri: null,
  },
];

export const SEED_SUBSCRIBERS: readonly SeedSubscriber[] = [
  {
    telco: "S",
    phone: "01012345678",
    name: "홍길동",
    gender: "M",
    birth: "1990-03-15",
    foreign: "L",
    ci: "CIhong0001AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
    code: "123456",
  },
  {
    telco: "K",
    phone: "01023456789",
    name: "김영희",
    gender: "F",
    birth: "2001-12-01",
    foreign: "L",
    ci: "CIkim0002BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA==",
    code: "234567",
  },
  {
    telco: "L",
    phone: "01034567890",
    name: "John Smith",
    gender: "M",
    birth: "1985-07-04",
    foreign: "F",
    ci: "CIsmith0003CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCA==",
    code: "345678",
  },
  {
    telco: "S",
    phone: "01045678901",
    name: "이민수",
    gender: "M",
    birth: "2012-05-20",
    foreign: "L",
    ci: "CIlee0004DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDA==",
    code: "456789",
  },
];

/**
 * A subscriber with an ordinary number: no fixed code, so a sign-in sends a real one-time code,
 * which the dev SMS outbox (`/dev/outbox`) shows.
 */
export const SEED_SMS_SUBSCRIBER: Omit<SeedSubscriber, "code"> = {
  telco: "K",
  phone: "01056789012",
  name: "박서준",
  gender: "M",
  birth: "1995-11-30",
  foreign: "L",
  ci: "CIpark0005EEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEA==",
};

type SeedEnv = { DB: D1Database; SEAL_KEY: string; PUBLIC_BASE_URL?: string };

/**
 * A seed client's events address on this server: the demo app's kit is on the service's own
 * origin, which `npm start` moves with PORT (PUBLIC_BASE_URL); other addresses are kept.
 */
function localEventsUri(uri: string | null, env: SeedEnv): string | null {
  if (uri === null || !env.PUBLIC_BASE_URL?.startsWith("http://localhost:")) return uri;
  return env.PUBLIC_BASE_URL + new URL(uri).pathname;
}

/** Inserts the seed where absent (INSERT OR IGNORE: operator changes to seed rows are kept). */
export async function applyDevSeed(env: SeedEnv): Promise<void> {
  const now = Date.now();
  const stmts: D1PreparedStatement[] = [];
  for (const c of SEED_CLIENTS) {
    stmts.push(
      env.DB.prepare(
        `INSERT OR IGNORE INTO clients (client_id, name, secret_sealed, redirect_uris, items, auto_login, events_uri, status, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'active', ?, ?)`,
      ).bind(
        c.clientId,
        c.name,
        await sealSecret(env, c.clientId, c.secret),
        JSON.stringify(c.redirectUris),
        JSON.stringify(c.items),
        c.autoLogin ? 1 : 0,
        localEventsUri(c.eventsUri, env),
        now,
        now,
      ),
    );
  }
  for (const s of SEED_SUBSCRIBERS) {
    stmts.push(
      env.DB.prepare(
        `INSERT OR IGNORE INTO subscribers (telco, phone, name, gender, birth, foreign_cd, ci, test_otp_hash, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).bind(s.telco, s.phone, s.name, s.gender, s.birth, s.foreign, s.ci, await sha256(s.code), now),
    );
  }
  const r = SEED_SMS_SUBSCRIBER;
  stmts.push(
    env.DB.prepare(
      `INSERT OR IGNORE INTO subscribers (telco, phone, name, gender, birth, foreign_cd, ci, test_otp_hash, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?)`,
    ).bind(r.telco, r.phone, r.name, r.gender, r.birth, r.foreign, r.ci, now),
  );
  await env.DB.batch(stmts);
}

let seeded: Promise<void> | undefined;

/** Applies the dev seed once per isolate. */
export function ensureDevSeed(env: SeedEnv): Promise<void> {
  seeded ??= applyDevSeed(env).catch((e: unknown) => {
    seeded = undefined;
    throw e;
  });
  return seeded;
}
