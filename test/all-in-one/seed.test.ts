// The dev seed ("tests and tools rely on these exact values"). The other tests take the
// seed from workers/all-in-one/seed.ts, so they would not notice a changed value; this file writes the
// issue's values out literally and checks them through HTTP, and that D1 holds no secret in clear.
import { env } from "../support/env";
import { shardRows } from "../support/shards";
import { describe, expect, it } from "vitest";
import { sha256 } from "../../workers/core/crypto";
import { basic, call, FORM, form, HONG, mintFor, userMe } from "../support/helpers";
import { Browser } from "../support/signin";
import { ensureDevSeed } from "../../workers/all-in-one/seed";

const CLIENTS = [
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
    items: ["ci", "phoneNo", "name", "gender", "agegroup", "birthday", "birthdate", "foreign", "telcoCd"],
    autoLogin: true,
  },
  {
    clientId: "limited-client",
    secret: "limitedSecret0123456789abcdefABC",
    name: "Limited App",
    redirectUris: ["https://limited.example/cb"],
    items: ["gender", "agegroup"],
    autoLogin: false,
  },
] as const;

const SUBSCRIBERS = [
  {
    telco: "S",
    phone: "01012345678",
    code: "123456",
    name: "홍길동",
    gender: "M",
    birth: "1990-03-15",
    foreign: "L",
    ci: "CIhong0001AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
  },
  {
    telco: "K",
    phone: "01023456789",
    code: "234567",
    name: "김영희",
    gender: "F",
    birth: "2001-12-01",
    foreign: "L",
    ci: "CIkim0002BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA==",
  },
  {
    telco: "L",
    phone: "01034567890",
    code: "345678",
    name: "John Smith",
    gender: "M",
    birth: "1985-07-04",
    foreign: "F",
    ci: "CIsmith0003CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCA==",
  },
  {
    telco: "S",
    phone: "01045678901",
    code: "456789",
    name: "이민수",
    gender: "M",
    birth: "2012-05-20",
    foreign: "L",
    ci: "CIlee0004DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDA==",
  },
] as const;

describe("the dev seed (README)", () => {
  it.each(CLIENTS)(
    "$clientId: every listed redirect URI is accepted, its name is shown, its literal secret exchanges a code",
    async (c) => {
      for (const uri of c.redirectUris) {
        const q = form({ response_type: "code", client_id: c.clientId, redirect_uri: uri, state: "seed" });
        const res = await call(`/oauth2/authorize?${q}`, { headers: { "Accept-Language": "en" } });
        expect(res.status, uri).toBe(200);
        expect(await res.text()).toContain(`Log in to ${c.name} with your mobile number.`);
      }
      const { code } = await mintFor(HONG.phone, {
        client: { clientId: c.clientId, redirectUris: [...c.redirectUris], items: c.items },
      });
      const res = await call("/oauth2/token", {
        method: "POST",
        headers: { ...FORM, Authorization: basic(c.clientId, c.secret) },
        body: form({ grant_type: "authorization_code", code }),
      });
      expect(res.status).toBe(200);
      const { access_token } = (await res.json()) as { access_token: string };
      const { user } = (await (await userMe(access_token)).json()) as { user: Record<string, string> };
      expect(Object.keys(user)).toEqual(["plid", ...c.items, "autoLoginYn", "autoStatusCheck"]);
    },
  );

  it("once applied in an isolate, the seed gives a request nothing to wait for", async () => {
    await ensureDevSeed(env); // applied now, or by an earlier request
    expect(ensureDevSeed(env)).toBeUndefined();
    expect((await call("/healthz")).status).toBe(200);
  });

  it("the clients' rows: items and automatic login as listed; the secret sealed, never stored in clear", async () => {
    const rows = (
      await env.DB.prepare(
        "SELECT client_id, name, redirect_uris, items, auto_login, secret_sealed FROM clients WHERE client_id IN ('demo-client', 'limited-client') ORDER BY client_id",
      ).all<Record<string, string | number>>()
    ).results;
    expect(
      rows.map((r) => ({
        clientId: r.client_id,
        name: r.name,
        redirectUris: JSON.parse(String(r.redirect_uris)),
        items: JSON.parse(String(r.items)),
        autoLogin: r.auto_login === 1,
      })),
    ).toEqual(
      CLIENTS.map((c) => ({
        clientId: c.clientId,
        name: c.name,
        redirectUris: c.redirectUris,
        items: c.items,
        autoLogin: c.autoLogin,
      })),
    );
    const all = JSON.stringify((await env.DB.prepare("SELECT * FROM clients").all()).results);
    for (const c of CLIENTS) {
      expect(all).not.toContain(c.secret);
      expect(all).not.toContain(c.secret.slice(0, 16));
      expect(all).not.toContain(btoa(c.secret));
    }
  });

  it("the four test subscribers, as listed, with their fixed codes (stored hashed)", async () => {
    const rows = (
      await shardRows<{ phone: string }>(
        'SELECT telco, phone, name, gender, birth, foreign_cd AS "foreign", ci, test_otp_hash FROM people WHERE phone IN (?, ?, ?, ?)',
        ...SUBSCRIBERS.map((s) => s.phone),
      )
    ).sort((a, b) => (a.phone < b.phone ? -1 : 1));
    expect(rows).toEqual(
      await Promise.all(SUBSCRIBERS.map(async ({ code, ...s }) => ({ ...s, test_otp_hash: await sha256(code) }))),
    );
  });

  it("the subscriber with an ordinary number, as listed: no fixed code; a sign-in sends a real code to the dev outbox", async () => {
    const [row] = await shardRows(
      'SELECT telco, phone, name, gender, birth, foreign_cd AS "foreign", ci, test_otp_hash FROM people WHERE phone = ?',
      "01056789012",
    );
    expect(row).toEqual({
      telco: "K",
      phone: "01056789012",
      name: "박서준",
      gender: "M",
      birth: "1995-11-30",
      foreign: "L",
      ci: "CIpark0005EEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEA==",
      test_otp_hash: null,
    });
    const b = new Browser();
    const verify = await b.submit(await b.authorize(), { telcoCd: "K", name: "박서준", phoneNo: "010-5678-9012" });
    expect(verify.form?.step).toBe("verify");
    const outbox = await (await call("/dev/outbox")).text();
    expect(outbox).toMatch(/\d{6}/);
    expect(outbox).toContain("01056789012");
  });

  it("each seed ci is canonical Base64 of 64 bytes: 88 characters, decodes to 64 bytes and re-encodes to itself", () => {
    for (const ci of [
      ...SUBSCRIBERS.map((s) => s.ci),
      "CIpark0005EEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEA==",
    ]) {
      expect(ci).toHaveLength(88);
      const bytes = Uint8Array.from(atob(ci), (c) => c.charCodeAt(0));
      expect(bytes).toHaveLength(64);
      expect(btoa(String.fromCharCode(...bytes))).toBe(ci);
    }
  });
});
