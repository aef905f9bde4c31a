// The dev seed (README "Dev seed"): two clients and four test subscribers with fixed one-time
// codes. Loaded only where DEV_MODE is on; tests and tools rely on these exact values.

import { sha256 } from "../core/crypto";
import { IDENTITY_ITEMS, type IdentityItem } from "../core/spec";
import { insertSeedClient, sealSecret } from "../provider/store/clients";
import {
  dirAt,
  subscriberRowAtNumber,
  type DirectoryEnv,
  ciShard,
  dirShards,
  numberShard,
} from "../provider/store/directory/index";

export interface SeedClient {
  clientId: string;
  secret: string;
  name: string;
  redirectUris: string[];
  items: IdentityItem[];
  autoLogin: boolean;
  /** OpenID Connect on (docs/oidc.md). */
  oidc?: boolean;
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
  {
    // OpenID Connect on (docs/oidc.md): an `openid` request gets an id_token beside the token
    clientId: "oidc-client",
    secret: "oidcSecret0123456789abcdefABCDEF",
    name: "OIDC Demo",
    redirectUris: ["https://oidc.example/callback", "http://localhost:8788/callback", "http://127.0.0.1:8788/callback"],
    items: ["name", "phoneNo", "gender", "birthdate"],
    autoLogin: true,
    oidc: true,
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

type SeedEnv = DirectoryEnv & { DB: D1Database; SEAL_KEY: string; PUBLIC_BASE_URL?: string };

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
    const secretSealed = await sealSecret(env, c.clientId, c.secret);
    stmts.push(insertSeedClient(env, { ...c, secretSealed, eventsUri: localEventsUri(c.eventsUri, env) }, now));
  }
  await env.DB.batch(stmts);
  // The people, in their numbers' shards where the number is free; then each seed person's ci is
  // indexed (again, harmlessly, on a later start), so a seed that died half way is completed.
  const n = dirShards(env);
  const people = [
    ...(await Promise.all(SEED_SUBSCRIBERS.map(async (s) => ({ ...s, testOtpHash: await sha256(s.code) })))),
    { ...SEED_SMS_SUBSCRIBER, testOtpHash: null },
  ].map(({ telco, phone, name, gender, birth, foreign, ci, testOtpHash }) => ({
    telco,
    phone,
    name,
    gender,
    birth,
    foreign,
    ci,
    testOtpHash,
    ciShard: ciShard(ci, n),
  }));
  const byShard = new Map<number, typeof people>();
  for (const p of people) byShard.set(numberShard(p.phone, n), [...(byShard.get(numberShard(p.phone, n)) ?? []), p]);
  await Promise.all([...byShard].map(([s, rows]) => dirAt(env, s).seed(s, rows)));
  for (const p of people) {
    const at = await subscriberRowAtNumber(env, p.phone);
    if (at && at.ci === p.ci && at.test_clients === null) await dirAt(env, p.ciShard).indexCi(p.ci, at.id);
  }
}

let seeded: Promise<void> | undefined;
let applied = false;

/**
 * Applies the dev seed once per isolate: the application while it runs (a failed one is tried
 * again by the next request), then undefined, so that a request after it waits for nothing.
 */
export function ensureDevSeed(env: SeedEnv): Promise<void> | undefined {
  if (applied) return undefined;
  seeded ??= applyDevSeed(env).then(
    () => void (applied = true),
    (e: unknown) => {
      seeded = undefined;
      throw e;
    },
  );
  return seeded;
}
