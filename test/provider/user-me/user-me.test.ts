import { env } from "../../support/env";
import { afterEach, describe, expect, it, vi } from "vitest";
import { deviceOfSubscriber } from "../../support/shards";
import { decryptField, randomToken } from "../../../workers/core/crypto";
import userMeWorker from "../../../workers/provider/user-me/index";
import { call, DEMO, HONG, KIM, LEE, LIMITED, mintFor, SMITH, tokenFor, userMe } from "../../support/helpers";
import { ENCRYPTED_ITEMS, IDENTITY_ITEMS, type IdentityItem } from "../../../workers/core/spec";
import { putAutoLoginGrant } from "../../../workers/provider/store/directory/grants";

type Envelope = { code: string; error: string; message: string; user: Record<string, string> };

async function readUser(token: string): Promise<Envelope> {
  const res = await userMe(token);
  expect(res.status).toBe(200);
  expect(res.headers.get("Cache-Control")).toBe("no-store");
  return (await res.json()) as Envelope;
}

async function decrypted(user: Record<string, string>, secret = DEMO.secret): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(user)) {
    out[k] = ENCRYPTED_ITEMS.has(k as IdentityItem) ? await decryptField(secret, v) : v;
  }
  return out;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("GET /v1/user/me: the record (spec §2.1, §2.2, §2.4, §4.3)", () => {
  it("answers the success envelope with every agreed item, encrypted items decrypting to the seed values", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-11-22T03:00:00Z") });
    const { token, plid } = await tokenFor(HONG.phone);
    const body = await readUser(token);
    expect(body.code).toBe("0000");
    expect(body.error).toBe("success");
    expect(typeof body.message).toBe("string");
    expect(Object.keys(body.user)).toEqual(["plid", ...IDENTITY_ITEMS, "autoLoginYn", "autoStatusCheck"]);
    expect(body.user.plid).toBe(plid);
    expect(plid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // encrypted on the wire: not the plain values
    expect(body.user.name).not.toBe(HONG.name);
    expect(body.user.phoneNo).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(await decrypted(body.user)).toEqual({
      plid,
      ci: HONG.ci,
      phoneNo: "01012345678",
      name: "홍길동",
      gender: "M",
      agegroup: "30",
      birthday: "0315",
      birthdate: "900315",
      foreign: "L",
      telcoCd: "S",
      autoLoginYn: "N",
      autoStatusCheck: "N",
    });
  });

  it.each([
    [
      KIM,
      {
        phoneNo: "01023456789",
        name: "김영희",
        gender: "F",
        birthday: "1201",
        birthdate: "011201",
        foreign: "L",
        telcoCd: "K",
        agegroup: "20",
      },
    ],
    [
      SMITH,
      {
        phoneNo: "01034567890",
        name: "John Smith",
        gender: "M",
        birthday: "0704",
        birthdate: "850704",
        foreign: "F",
        telcoCd: "L",
        agegroup: "40",
      },
    ],
    [
      LEE,
      {
        phoneNo: "01045678901",
        name: "이민수",
        gender: "M",
        birthday: "0520",
        birthdate: "120520",
        foreign: "L",
        telcoCd: "S",
        agegroup: "10",
      },
    ],
  ])("returns the seed values of $phone", async (sub, expected) => {
    vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-11-22T03:00:00Z") });
    const { token } = await tokenFor(sub.phone);
    const user = await decrypted((await readUser(token)).user);
    expect(user).toMatchObject({ ...expected, ci: sub.ci });
  });

  it("returns only the client's agreed items: limited-client gets gender and agegroup, nothing encrypted", async () => {
    const { token, plid } = await tokenFor(HONG.phone, { client: LIMITED, secret: LIMITED.secret });
    const body = await readUser(token);
    expect(body.user).toEqual({
      plid,
      gender: "M",
      agegroup: expect.stringMatching(/^\d+0$|^0$/),
      autoLoginYn: "N",
      autoStatusCheck: "N",
    });
  });

  it("computes agegroup from the birth date at request time, in Korean time", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    // 김영희, born 2001-12-01, turns 20 at 2021-12-01 00:00 KST = 2021-11-30T15:00Z
    vi.setSystemTime(new Date("2021-11-30T14:59:00Z"));
    expect((await readUser((await tokenFor(KIM.phone)).token)).user.agegroup).toBe("10");
    vi.setSystemTime(new Date("2021-11-30T15:00:00Z"));
    expect((await readUser((await tokenFor(KIM.phone)).token)).user.agegroup).toBe("20");
  });

  it("computes agegroup when /v1/user/me is read, not when the code or token was issued (docs/architecture.md §4.5)", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    // 김영희 turns 20 at 2021-11-30T15:00Z (KST midnight); the token is issued 5 minutes before
    vi.setSystemTime(new Date("2021-11-30T14:55:00Z"));
    const { token } = await tokenFor(KIM.phone);
    vi.setSystemTime(new Date("2021-11-30T15:00:30Z"));
    expect((await readUser(token)).user.agegroup).toBe("20");
  });

  it("each subscriber has one plid per client, and different clients see different plids", async () => {
    const a = await tokenFor(SMITH.phone);
    const b = await tokenFor(SMITH.phone);
    const c = await tokenFor(SMITH.phone, { client: LIMITED, secret: LIMITED.secret });
    expect(a.plid).toBe(b.plid);
    expect(c.plid).not.toBe(a.plid);
  });
});

describe("GET /v1/user/me: automatic-login modes (spec §2.1, docs/architecture.md §4.5, §4.7)", () => {
  async function grant(subscriberPhone: string) {
    const deviceHash = randomToken(32);
    const { subscriberId } = await mintFor(subscriberPhone);
    await putAutoLoginGrant(env, {
      device: deviceOfSubscriber(subscriberId, deviceHash),
      clientId: DEMO.clientId,
      subscriberId,
      expiresAt: Date.now() + 14 * 86400_000,
    });
    // the opt-in login's code (unread): its grant's first report is pending
    await mintFor(subscriberPhone, { autoLogin: { deviceHash, automatic: false }, optIn: true });
    return deviceHash;
  }

  it("the opt-in login's first read is full identity with autoLoginYn=Y, autoStatusCheck=Y", async () => {
    const deviceHash = await grant(KIM.phone);
    const { token } = await tokenFor(KIM.phone, { autoLogin: { deviceHash, automatic: false } });
    const user = await decrypted((await readUser(token)).user);
    expect(user).toMatchObject({ name: "김영희", phoneNo: KIM.phone, autoLoginYn: "Y", autoStatusCheck: "Y" });
  });

  it("a later automatic login is mode 2: plid, Y, N and every agreed item empty (encryptions of the empty string)", async () => {
    const deviceHash = await grant(KIM.phone);
    await readUser((await tokenFor(KIM.phone, { autoLogin: { deviceHash, automatic: false } })).token);
    const { token, plid } = await tokenFor(KIM.phone, { autoLogin: { deviceHash, automatic: true } });
    const body = await readUser(token);
    expect(Object.keys(body.user)).toEqual(["plid", ...IDENTITY_ITEMS, "autoLoginYn", "autoStatusCheck"]);
    for (const item of IDENTITY_ITEMS) {
      if (ENCRYPTED_ITEMS.has(item)) {
        expect(body.user[item]).not.toBe("");
        expect(await decryptField(DEMO.secret, body.user[item]!)).toBe("");
      } else {
        expect(body.user[item]).toBe("");
      }
    }
    expect(body.user).toMatchObject({ plid, autoLoginYn: "Y", autoStatusCheck: "N" });
  });

  it("an automatic login before the first report was read still gives the first report (Y/Y, full)", async () => {
    const deviceHash = await grant(HONG.phone);
    const { token } = await tokenFor(HONG.phone, { autoLogin: { deviceHash, automatic: true } });
    const user = await decrypted((await readUser(token)).user);
    expect(user).toMatchObject({ name: "홍길동", autoLoginYn: "Y", autoStatusCheck: "Y" });
  });

  it("an interactive login while a grant exists is full identity with Y/N", async () => {
    const deviceHash = await grant(HONG.phone);
    await readUser((await tokenFor(HONG.phone, { autoLogin: { deviceHash, automatic: false } })).token);
    const { token } = await tokenFor(HONG.phone, { autoLogin: { deviceHash, automatic: false } });
    const user = await decrypted((await readUser(token)).user);
    expect(user).toMatchObject({ name: "홍길동", autoLoginYn: "Y", autoStatusCheck: "N" });
  });

  it("the flags are present for a client without automatic login (N/N)", async () => {
    const { token } = await tokenFor(KIM.phone, { client: LIMITED, secret: LIMITED.secret });
    expect((await readUser(token)).user).toMatchObject({ autoLoginYn: "N", autoStatusCheck: "N" });
  });
});

describe("GET /v1/user/me: refusals (spec §5, §7; docs/architecture.md §4.7)", () => {
  async function expectAuthFailed(res: Response) {
    expect(res.status).toBe(401);
    expect(res.headers.get("WWW-Authenticate")).toBe('Bearer error="invalid_token"');
    expect(await res.json()).toEqual({ error: "authentication_failed", message: "Authentication failed." });
  }

  it("no Authorization header: 401 authentication_failed", async () => {
    await expectAuthFailed(await call("/v1/user/me"));
  });

  it.each(["Basic abc", "Bearer", "Bearer a b", "Bearer <script>", "Token abc", ""])(
    "a malformed header %j: 401",
    async (h) => {
      await expectAuthFailed(await call("/v1/user/me", { headers: { Authorization: h } }));
    },
  );

  it("an unknown token: 401", async () => {
    await expectAuthFailed(await userMe(randomToken(32)));
  });

  it("the Bearer scheme is case-insensitive", async () => {
    const { token } = await tokenFor(HONG.phone);
    const res = await call("/v1/user/me", { headers: { Authorization: `BEARER ${token}` } });
    expect(res.status).toBe(200);
  });

  it("a token expires after expires_in (600 s)", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const { token } = await tokenFor(HONG.phone);
    vi.setSystemTime(Date.now() + 601_000);
    await expectAuthFailed(await userMe(token));
  });

  it("a second read of one token is refused (one read per token, reference behaviour)", async () => {
    const { token } = await tokenFor(HONG.phone);
    await readUser(token);
    await expectAuthFailed(await userMe(token));
  });

  it("one read per token is the default of USER_ME_MAX_READS: with 2, a second read succeeds and a third is refused", async () => {
    const { token } = await tokenFor(HONG.phone);
    const twice = { ...env, USER_ME_MAX_READS: "2" };
    const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
    const read = () =>
      userMeWorker.fetch!(
        new Request("http://localhost/v1/user/me", { headers: { Authorization: `Bearer ${token}` } }) as never,
        twice,
        ctx,
      );
    expect((await read()).status).toBe(200);
    expect((await read()).status).toBe(200);
    await expectAuthFailed(await read());
  });

  it("concurrent reads of one token: exactly one succeeds", async () => {
    const { token } = await tokenFor(HONG.phone);
    const statuses = (await Promise.all(Array.from({ length: 20 }, () => userMe(token)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 401)).toHaveLength(19);
  });

  it("POST is 405 with Allow: GET", async () => {
    const res = await call("/v1/user/me", { method: "POST" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("GET");
    expect(((await res.json()) as { error: string }).error).toBe("method_not_allowed");
  });
});
