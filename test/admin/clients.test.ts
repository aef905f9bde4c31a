// The admin API: bearer-token gate, client registration and changes, audit paging.
import { env } from "../support/env";
import { aroundCalls, shardRows } from "../support/shards";
import fc from "fast-check";
import { dirAt } from "../../workers/provider/store/directory/directory-shard";
import { subscriberByPhone } from "../../workers/provider/store/directory/directory";
import { homeOfId } from "../../workers/provider/store/directory/keys";
import { recordConsent } from "../support/store";
import { SEED_SUBSCRIBERS } from "../../workers/all-in-one/seed";
import { afterEach, describe, expect, it, vi } from "vitest";
import adminWorker from "../../workers/admin/index";
import devWorker from "../../workers/all-in-one/index";
import { decryptField } from "../../workers/core/crypto";
import { storeFor } from "../../workers/provider/store/one-time/one-time-store";
import { redirectUriProblem } from "../../workers/admin/validate";
import { admin, ADMIN_TOKEN, asClient, createClient } from "../support/admin";
import { flushAudit } from "../support/audit";
import {
  basic,
  call,
  DEMO,
  exchange,
  FORM,
  form,
  HONG,
  afterRead,
  KIM,
  mintFor,
  redeemArgs,
  tokenFor,
  userMe,
} from "../support/helpers";
import { deleteClient } from "../../workers/provider/store/flows/delete-client";
import { sha256 } from "../../workers/core/crypto";

const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;

afterEach(() => {
  vi.restoreAllMocks();
});

async function expectError(res: Response, status: number, error: string, message?: string | RegExp) {
  expect(res.status).toBe(status);
  expect(res.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
  const body = (await res.json()) as { error: string; message: string };
  expect(body.error).toBe(error);
  if (typeof message === "string") expect(body.message).toBe(message);
  else if (message) expect(body.message).toMatch(message);
  return body;
}

function authorizeFor(clientId: string, redirectUri: string): Promise<Response> {
  return call(
    "/oauth2/authorize?" + form({ response_type: "code", client_id: clientId, redirect_uri: redirectUri, state: "s" }),
  );
}

describe("admin authentication (bearer token from the ADMIN_TOKEN secret, constant-time compare)", () => {
  const wrong = [
    ["no Authorization header", null],
    ["an empty token", ""],
    ["a wrong token", "x".repeat(40)],
    ["the token with one more character", ADMIN_TOKEN + "x"],
    ["the token's prefix", ADMIN_TOKEN.slice(0, -1)],
  ] as const;
  it.each(wrong)("%s: 401 authentication_failed with WWW-Authenticate: Bearer", async (_t, token) => {
    const res = await admin("GET", "/admin/clients", { token });
    expect(res.headers.get("WWW-Authenticate")).toMatch(/^Bearer/);
    await expectError(res, 401, "authentication_failed");
  });

  it("an empty Authorization header, or the token under the Basic scheme: 401", async () => {
    await expectError(
      await admin("GET", "/admin/clients", { token: null, headers: { Authorization: "" } }),
      401,
      "authentication_failed",
    );
    const basic = "Basic " + btoa(`admin:${ADMIN_TOKEN}`);
    await expectError(
      await admin("GET", "/admin/clients", { token: null, headers: { Authorization: basic } }),
      401,
      "authentication_failed",
    );
  });

  it("the gate answers before method dispatch: an unauthenticated PUT is 401, an authenticated one 405 with Allow", async () => {
    await expectError(await admin("PUT", "/admin/clients", { token: null }), 401, "authentication_failed");
    const res = await admin("PUT", "/admin/clients");
    expect(res.headers.get("Allow")).toBe("GET, POST");
    await expectError(res, 405, "method_not_allowed");
  });

  it("the right token, with the scheme in any case, is accepted", async () => {
    const res = await admin("GET", "/admin/clients", {
      token: null,
      headers: { Authorization: `bEaReR ${ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(200);
  });

  it("ADMIN_TOKEN unset: every admin path and method is 404, even with a token (never enabled without the secret)", async () => {
    for (const unset of [
      { ...env, ADMIN_TOKEN: undefined },
      { ...env, ADMIN_TOKEN: "" },
    ]) {
      for (const [method, path] of [
        ["GET", "/admin/clients"],
        ["POST", "/admin/clients"],
        ["PUT", "/admin/clients"],
        ["DELETE", "/admin/clients/demo-client"],
        ["POST", "/admin/directory/import"],
        ["GET", "/admin/audit"],
      ] as const) {
        const req = () =>
          new Request(`http://localhost${path}`, {
            method,
            headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
            body: method === "GET" ? undefined : JSON.stringify({ name: "x", redirect_uris: ["https://x.example/cb"] }),
          });
        await expectError(await adminWorker.fetch!(req() as never, unset, ctx), 404, "not_found");
        await expectError(await devWorker.fetch!(req() as never, unset as never, ctx), 404, "not_found");
      }
    }
    const stillThere = await admin("GET", "/admin/clients/demo-client");
    expect(stillThere.status).toBe(200);
  });

  it("an ADMIN_TOKEN shorter than 32 characters is a configuration error naming it (fixed 500 on the wire)", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const weak = { ...env, ADMIN_TOKEN: "short-token", LOG_REQUESTS: "true" };
    const res = await adminWorker.fetch!(
      new Request("http://localhost/admin/clients", { headers: { Authorization: "Bearer short-token" } }) as never,
      weak,
      ctx,
    );
    await expectError(res, 500, "server_error", "A temporary error occurred. Retry later.");
    const line = JSON.parse(log.mock.calls.at(-1)![0] as string) as Record<string, unknown>;
    expect(String(line.cause)).toContain("ADMIN_TOKEN");
    expect(JSON.stringify(line)).not.toContain("short-token");
  });

  it("a malformed SEAL_KEY is a configuration error naming SEAL_KEY", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const bad = { ...env, SEAL_KEY: btoa("sixteen-bytes!!!"), LOG_REQUESTS: "true" };
    const res = await adminWorker.fetch!(
      new Request("http://localhost/admin/clients", { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } }) as never,
      bad,
      ctx,
    );
    await expectError(res, 500, "server_error", "A temporary error occurred. Retry later.");
    const line = JSON.parse(log.mock.calls.at(-1)![0] as string) as Record<string, unknown>;
    expect(line.cause).toBe("configuration: SEAL_KEY must be Base64 of 32 bytes (openssl rand -base64 32)");
  });

  it("a missing SEAL_KEY at the token endpoint is a configuration error naming SEAL_KEY", async () => {
    const { default: tokenWorker } = await import("../../workers/provider/token/index");
    const { forgetClient } = await import("../../workers/provider/store/clients");
    const { code } = await mintFor(HONG.phone);
    forgetClient(DEMO.clientId);
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const res = await tokenWorker.fetch!(
      new Request("http://localhost/oauth2/token", {
        method: "POST",
        headers: {
          "Content-Type": "application/x-www-form-urlencoded",
          Authorization: "Basic " + btoa(`${DEMO.clientId}:${DEMO.secret}`),
        },
        body: form({ grant_type: "authorization_code", code }),
      }) as never,
      { ...env, SEAL_KEY: undefined as never, LOG_REQUESTS: "true" },
      ctx,
    );
    await expectError(res, 500, "server_error");
    const line = JSON.parse(log.mock.calls.at(-1)![0] as string) as Record<string, unknown>;
    expect(line.cause).toBe("configuration: SEAL_KEY is required but not set");
  });
});

describe("clients: create, read, list", () => {
  it("create answers 201 with a 20-alphanumeric client_id and a 64-alphanumeric secret, shown once", async () => {
    const res = await admin("POST", "/admin/clients", {
      json: {
        name: "Shop",
        redirect_uris: ["https://shop.example/cb"],
        items: ["name", "phoneNo", "birthdate"],
        auto_login: true,
      },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("Cache-Control")).toContain("no-store");
    const c = (await res.json()) as Record<string, unknown>;
    expect(c.client_id).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(c.client_secret).toMatch(/^[A-Za-z0-9]{64}$/);
    expect(c).toMatchObject({
      name: "Shop",
      redirect_uris: ["https://shop.example/cb"],
      items: ["phoneNo", "name", "birthdate"],
      auto_login: true,
      status: "active",
      previous_secret_valid_until: null,
    });

    const read = await admin("GET", `/admin/clients/${c.client_id}`);
    expect(read.status).toBe(200);
    const text = await read.text();
    expect(text).not.toContain(c.client_secret as string);
    expect(JSON.parse(text)).not.toHaveProperty("client_secret");
    expect(JSON.parse(text)).toMatchObject({ client_id: c.client_id, name: "Shop" });

    const list = (await (await admin("GET", "/admin/clients")).json()) as { clients: Record<string, unknown>[] };
    expect(list.clients.map((x) => x.client_id)).toEqual(
      expect.arrayContaining(["demo-client", "limited-client", c.client_id]),
    );
    expect(JSON.stringify(list)).not.toContain(c.client_secret as string);
    for (const x of list.clients) expect(x).not.toHaveProperty("client_secret");
  });

  it("a created client signs in at once: its secret exchanges a code and keys the field cipher (spec §2.2)", async () => {
    const c = await createClient();
    const { token } = await tokenFor(HONG.phone, { client: asClient(c), secret: c.client_secret });
    const { user } = (await (await userMe(token)).json()) as { user: Record<string, string> };
    expect(Object.keys(user)).toEqual(["plid", "phoneNo", "name", "birthdate", "autoLoginYn", "autoStatusCheck"]);
    expect(await decryptField(c.client_secret, user.name!)).toBe(HONG.name);
    expect(await decryptField(c.client_secret, user.phoneNo!)).toBe(HONG.phone);
  });

  it("two clients never share an id or a secret", async () => {
    const [a, b] = await Promise.all([createClient(), createClient()]);
    expect(a.client_id).not.toBe(b.client_id);
    expect(a.client_secret).not.toBe(b.client_secret);
  });

  it("items default to none and are stored once each, in spec §2.1 order; auto_login defaults to false", async () => {
    const plain = await admin("POST", "/admin/clients", {
      json: { name: "Plain", redirect_uris: ["https://p.example/cb"] },
    });
    expect(await plain.json()).toMatchObject({ items: [], auto_login: false });
    const c = await createClient({ items: ["telcoCd", "ci", "telcoCd", "agegroup"] });
    expect(c.items).toEqual(["ci", "agegroup", "telcoCd"]);
  });

  it("an unknown client id is 404 'No such client.' on read, update, rotate, disable and delete", async () => {
    for (const [method, path] of [
      ["GET", "/admin/clients/nope"],
      ["PATCH", "/admin/clients/nope"],
      ["POST", "/admin/clients/nope/rotate-secret"],
      ["POST", "/admin/clients/nope/disable"],
      ["DELETE", "/admin/clients/nope"],
    ] as const) {
      await expectError(
        await admin(method, path, method === "PATCH" ? { json: { name: "x" } } : {}),
        404,
        "not_found",
        "No such client.",
      );
    }
  });
});

describe("clients: input validation (nothing is echoed back)", () => {
  it.each([
    ["https://shop.example/cb"],
    ["https://shop.example:8443/cb?x=1"],
    ["http://localhost/cb"],
    ["http://localhost:3000/auth/callback"],
    ["http://127.0.0.1:8787/cb"],
    ["http://[::1]:8080/cb"],
    ["demoapp://callback"],
    ["com.example.app:/oauth2redirect"],
  ])("accepts %s (https, loopback http, custom app scheme)", (uri) => {
    expect(redirectUriProblem(uri)).toBeNull();
  });

  it.each([
    ["http://shop.example/cb", /http is allowed only for loopback/],
    ["http://localhost.evil.example/cb", /http is allowed only for loopback/],
    ["http://127.0.0.2/cb", /http is allowed only for loopback/],
    ["https://shop.example/cb#frag", /fragment/],
    ["https://shop.example/cb#", /fragment/],
    ["/auth/callback", /absolute/],
    ["shop.example/cb", /absolute/],
    ["https://user:pass@shop.example/cb", /credentials/],
    ["https://shop.example/c b", /spaces/],
    ["javascript:alert(1)", /scheme cannot be a callback/],
    ["data:text/html,x", /scheme cannot be a callback/],
    ["file:///etc/passwd", /scheme cannot be a callback/],
    ["", /1 to 2048/],
  ])("refuses %s", async (uri, reason) => {
    expect(redirectUriProblem(uri)).toMatch(reason);
    const res = await admin("POST", "/admin/clients", {
      json: { name: "Bad", redirect_uris: ["https://ok.example/cb", uri] },
    });
    const body = await expectError(res, 400, "invalid_request", /^The value of redirect_uris\[1\] is not valid: /);
    if (uri.length > 3) expect(body.message).not.toContain(uri);
  });

  it.each([
    ["missing name", { redirect_uris: ["https://x.example/cb"] }, "A required item name is missing."],
    ["missing redirect_uris", { name: "X" }, "A required item redirect_uris is missing."],
    ["empty redirect_uris", { name: "X", redirect_uris: [] }, /redirect_uris is not valid/],
    ["redirect_uris not an array", { name: "X", redirect_uris: "https://x.example/cb" }, /redirect_uris is not valid/],
    ["blank name", { name: "  ", redirect_uris: ["https://x.example/cb"] }, /name is not valid/],
    [
      "unknown item",
      { name: "X", redirect_uris: ["https://x.example/cb"], items: ["name", "email"] },
      /items\[1\] is not valid: unknown item/,
    ],
    [
      "auto_login not a boolean",
      { name: "X", redirect_uris: ["https://x.example/cb"], auto_login: "yes" },
      /auto_login is not valid/,
    ],
    [
      "an unknown field (a typo)",
      { name: "X", redirect_uri: ["https://x.example/cb"] },
      /redirect_uri is not valid: unknown field/,
    ],
  ])("create with %s: 400 invalid_request", async (_t, json, message) => {
    await expectError(await admin("POST", "/admin/clients", { json }), 400, "invalid_request", message);
  });

  it("a body that is not JSON, not an object, or not sent as application/json is refused", async () => {
    await expectError(
      await admin("POST", "/admin/clients", { body: "{nope", type: "application/json" }),
      400,
      "invalid_request",
      /body is not valid: not JSON/,
    );
    await expectError(
      await admin("POST", "/admin/clients", { body: "[1]", type: "application/json" }),
      400,
      "invalid_request",
      /must be a JSON object/,
    );
    await expectError(
      await admin("POST", "/admin/clients", { body: form({ name: "x" }), type: "application/x-www-form-urlencoded" }),
      400,
      "invalid_request",
      /Content-Type/,
    );
  });
});

describe("clients: update, disable, enable, delete", () => {
  it("update changes name, redirect URIs, items and the automatic-login flag, and the change applies at once (cache dropped)", async () => {
    const c = await createClient();
    expect((await authorizeFor(c.client_id, "https://shop.example/cb")).status).toBe(200); // cached now
    const res = await admin("PATCH", `/admin/clients/${c.client_id}`, {
      json: {
        name: "Shop 2",
        redirect_uris: ["https://shop.example/new-cb", "shopapp://cb"],
        items: ["gender"],
        auto_login: false,
      },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      name: "Shop 2",
      redirect_uris: ["https://shop.example/new-cb", "shopapp://cb"],
      items: ["gender"],
      auto_login: false,
    });
    expect((await authorizeFor(c.client_id, "https://shop.example/new-cb")).status).toBe(200);
    const old = await authorizeFor(c.client_id, "https://shop.example/cb");
    await expectError(old, 400, "invalid_grant");

    const { token } = await tokenFor(KIM.phone, {
      client: { ...asClient(c), redirectUris: ["https://shop.example/new-cb"], items: ["gender"] },
      secret: c.client_secret,
    });
    const { user } = (await (await userMe(token)).json()) as { user: Record<string, string> };
    expect(user).toMatchObject({ gender: "F", autoLoginYn: "N", autoStatusCheck: "N" });
    expect(user).not.toHaveProperty("name");
  });

  it("update validates like create: a bad redirect URI, item or flag is 400 and changes nothing (redirect URIs validated on entry)", async () => {
    const c = await createClient();
    for (const json of [
      { redirect_uris: ["https://shop.example/cb#frag"] },
      { redirect_uris: ["http://shop.example/cb"] },
      { redirect_uris: ["https://shop.example/new", "javascript:alert(1)"] },
      { redirect_uris: [] },
      { name: "Renamed", items: ["email"] },
      { name: "Renamed", auto_login: "no" },
      { name: "Renamed", redirect_uri: ["https://shop.example/cb"] },
    ]) {
      await expectError(await admin("PATCH", `/admin/clients/${c.client_id}`, { json }), 400, "invalid_request");
    }
    const read = (await (await admin("GET", `/admin/clients/${c.client_id}`)).json()) as Record<string, unknown>;
    expect(read).toMatchObject({
      name: "Test Shop",
      redirect_uris: ["https://shop.example/cb"],
      items: ["phoneNo", "name", "birthdate"],
      auto_login: true,
    });
    expect((await authorizeFor(c.client_id, "https://shop.example/cb")).status).toBe(200);
  });

  it("update with no known field is 400; a partial update keeps the other fields", async () => {
    const c = await createClient();
    await expectError(await admin("PATCH", `/admin/clients/${c.client_id}`, { json: {} }), 400, "invalid_request");
    const res = await admin("PATCH", `/admin/clients/${c.client_id}`, { json: { auto_login: false } });
    expect(await res.json()).toMatchObject({
      name: "Test Shop",
      redirect_uris: ["https://shop.example/cb"],
      auto_login: false,
    });
  });

  it("disable refuses the client everywhere (authorize, token, user/me) until enabled again", async () => {
    const c = await createClient();
    const { code } = await mintFor(HONG.phone, { client: asClient(c) });
    const { token } = await tokenFor(KIM.phone, { client: asClient(c), secret: c.client_secret });
    const off = await admin("POST", `/admin/clients/${c.client_id}/disable`);
    expect(await off.json()).toMatchObject({ status: "disabled" });
    await expectError(await authorizeFor(c.client_id, "https://shop.example/cb"), 400, "invalid_client");
    await expectError(await exchange(code, { clientId: c.client_id, secret: c.client_secret }), 401, "invalid_client");
    await expectError(await userMe(token), 401, "authentication_failed");

    const on = await admin("POST", `/admin/clients/${c.client_id}/enable`);
    expect(await on.json()).toMatchObject({ status: "active" });
    expect((await exchange(code, { clientId: c.client_id, secret: c.client_secret })).status).toBe(200);
  });

  it("delete removes the client with its plid links; its credentials stop working", async () => {
    const c = await createClient();
    const { code, plid } = await mintFor(HONG.phone, { client: asClient(c) });
    const res = await admin("DELETE", `/admin/clients/${c.client_id}`);
    expect(await res.json()).toEqual({ client_id: c.client_id, deleted: true });
    await expectError(await admin("GET", `/admin/clients/${c.client_id}`), 404, "not_found");
    await expectError(await exchange(code, { clientId: c.client_id, secret: c.client_secret }), 401, "invalid_client");
    expect(await shardRows("SELECT plid FROM links WHERE plid = ?", plid)).toEqual([]);
  });

  /** The directory namespace, running `meanwhile` once before or after the deletion's step in one person's home shard. */
  function atHomeStep(subscriberId: number, when: "before" | "after", meanwhile: () => Promise<unknown>) {
    const home = env.DIRECTORY.idFromName(`dir-${homeOfId(subscriberId)}`);
    let done = false;
    const hook = async (method: string, _args: unknown[], id: DurableObjectId) => {
      if (done || method !== "takeClientLinks" || !id.equals(home)) return;
      done = true;
      await meanwhile();
    };
    return aroundCalls(env.DIRECTORY, when === "before" ? hook : undefined, when === "after" ? hook : undefined);
  }

  it("a consent landing in a shard before the deletion takes the client's links there: its link is taken and its plid ends", async () => {
    const c = await createClient();
    const hong = (await subscriberByPhone(env, HONG.phone))!;
    let late: { code: string; plid: string } | null = null;
    const dir = atHomeStep(hong.id, "before", async () => (late = await mintFor(HONG.phone, { client: asClient(c) })));
    expect(await deleteClient({ ...env, DIRECTORY: dir } as never, c.client_id)).toBe(true);
    expect(late).not.toBeNull();
    expect(await shardRows("SELECT plid FROM links WHERE client_id = ?", c.client_id)).toEqual([]);
    // The client is gone, so its credentials fail first at the token route; the store itself, which
    // holds the code, must refuse it for the ended plid.
    expect(await redemption(late!.code, c.client_id)).toEqual({ ok: false, reason: "revoked" });
  });

  it("a consent landing in a shard after the deletion took the client's links there is refused in its own step: no link, no code", async () => {
    const c = await createClient();
    const hong = (await subscriberByPhone(env, HONG.phone))!;
    let late: string | null | undefined;
    const dir = atHomeStep(
      hong.id,
      "after",
      async () => (late = await recordConsent(env, c.client_id, hong.id, DEMO.items)),
    );
    expect(await deleteClient({ ...env, DIRECTORY: dir } as never, c.client_id)).toBe(true);
    expect(late).toBeNull();
    expect(await shardRows("SELECT plid FROM links WHERE client_id = ?", c.client_id)).toEqual([]);
    // the same for a sign-in's consent (the one call that also reads the person for the code)
    expect(await dirAt(env, homeOfId(hong.id)).consentLogin(hong.id, c.client_id, 1, crypto.randomUUID())).toBeNull();
  });

  it("invariant: consents racing a deletion at random moments leave no link of the client, and every code they minted is refused", async () => {
    const people = await Promise.all(SEED_SUBSCRIBERS.slice(0, 4).map((p) => subscriberByPhone(env, p.phone)));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(40), { minLength: 4, maxLength: 4 }), async (delays) => {
        const c = await createClient();
        const consents = people.map(async (p, i) => {
          await scheduler.wait(delays[i]!);
          return mintFor(p!.phone, { client: asClient(c) }).catch((e: Error) => {
            if (!/gone/.test(e.message)) throw e;
            return null; // refused in the person's home: the client had ended there
          });
        });
        const [deleted, ...minted] = await Promise.all([
          scheduler.wait(20).then(() => deleteClient(env, c.client_id)),
          ...consents,
        ]);
        expect(deleted).toBe(true);
        expect(await shardRows("SELECT plid FROM links WHERE client_id = ?", c.client_id)).toEqual([]);
        for (const m of minted)
          if (m) expect(await redemption(m.code, c.client_id)).toEqual({ ok: false, reason: "revoked" });
      }),
      { numRuns: 8 },
    );
  });
});

/** Whether a code still redeems: its store refuses one of an ended plid ("revoked"), whatever the client. */
async function redemption(code: string, clientId: string) {
  return storeFor(env, code, 16).redeemCode(
    ...redeemArgs({
      codeHash: await sha256(code),
      clientId,
      verifierChallenge: null,
      redirectUri: null,
      tokenHash: await sha256(`t${code}`),
      tokenTtlMs: 60_000,
      secretId: "s",
    }),
  );
}

describe("clients: a deletion killed midway, then retried", () => {
  /**
   * `deleteClient` with its first call of `method` (directory or one-time store) failing as a killed
   * worker's would; returns once the deletion's other calls, still running in other shards, are done.
   */
  async function killedAt(method: "takeClientLinks" | "revokePlids", clientId: string): Promise<unknown> {
    let killed = false;
    let inFlight = 0;
    const before = async (m: string) => {
      if (m !== "takeClientLinks" && m !== "revokePlids") return;
      if (!killed && m === method) {
        killed = true;
        throw new Error("worker killed");
      }
      inFlight++;
    };
    const after = async (m: string) => {
      if (m === "takeClientLinks" || m === "revokePlids") inFlight--;
    };
    const bindings = {
      DIRECTORY: aroundCalls(env.DIRECTORY, before, after),
      ONE_TIME: aroundCalls(env.ONE_TIME, before, after),
    };
    const err = await deleteClient({ ...env, ...bindings } as never, clientId).then(
      () => null,
      (e: Error) => e,
    );
    expect(killed).toBe(true);
    await vi.waitFor(() => expect(inFlight).toBe(0));
    return err;
  }

  it("killed before a shard's step: the client stands until a retry, which leaves no link, no client and no redeemable code", async () => {
    const c = await createClient();
    const { code, plid } = await mintFor(HONG.phone, { client: asClient(c) });
    expect(await killedAt("takeClientLinks", c.client_id)).toBeInstanceOf(Error);
    expect((await admin("GET", `/admin/clients/${c.client_id}`)).status).toBe(200);
    const res = await admin("DELETE", `/admin/clients/${c.client_id}`);
    expect(await res.json()).toEqual({ client_id: c.client_id, deleted: true });
    expect(await shardRows("SELECT plid FROM links WHERE client_id = ?", c.client_id)).toEqual([]);
    expect(await shardRows("SELECT plid FROM links WHERE plid = ?", plid)).toEqual([]);
    expect(await redemption(code, c.client_id)).toEqual({ ok: false, reason: "revoked" });
  });

  it("killed after a shard took the links but before their plids ended: a retry deletes the client, and its codes and tokens fail with it", async () => {
    const c = await createClient();
    const { code } = await mintFor(HONG.phone, { client: asClient(c) });
    const { token } = await tokenFor(KIM.phone, { client: asClient(c), secret: c.client_secret });
    expect(await killedAt("revokePlids", c.client_id)).toBeInstanceOf(Error);
    // the links are taken, and a consent in those shards is refused from then on
    expect(await shardRows("SELECT plid FROM links WHERE client_id = ?", c.client_id)).toEqual([]);
    const hong = (await subscriberByPhone(env, HONG.phone))!;
    expect(await recordConsent(env, c.client_id, hong.id, DEMO.items)).toBeNull();
    const res = await admin("DELETE", `/admin/clients/${c.client_id}`);
    expect(await res.json()).toEqual({ client_id: c.client_id, deleted: true });
    await expectError(await exchange(code, { clientId: c.client_id, secret: c.client_secret }), 401, "invalid_client");
    await expectError(await userMe(token), 401, "authentication_failed");
  });
});

describe("audit events (R2) and their paging", () => {
  it("client changes are audited with the client id, without secrets, newest first", async () => {
    const c = await createClient();
    await admin("PATCH", `/admin/clients/${c.client_id}`, { json: { name: "Renamed" } });
    const rotated = (await (await admin("POST", `/admin/clients/${c.client_id}/rotate-secret`)).json()) as {
      client_secret: string;
    };
    await admin("POST", `/admin/clients/${c.client_id}/disable`);
    await admin("POST", `/admin/clients/${c.client_id}/enable`);
    await admin("DELETE", `/admin/clients/${c.client_id}`);
    await flushAudit(); // listed once written to R2 (AUDIT_FLUSH_SECONDS)
    const res = await admin("GET", `/admin/audit?client_id=${c.client_id}`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const { events, next_before } = JSON.parse(text) as {
      events: { type: string; client_id: string; at: string; outcome: string; detail: unknown }[];
      next_before: string | null;
    };
    expect(events.map((e) => e.type)).toEqual([
      "client.deleted",
      "client.updated",
      "client.disabled",
      "client.secret_rotated",
      "client.updated",
      "client.created",
    ]);
    expect(
      events.every((e) => e.client_id === c.client_id && e.outcome === "ok" && !Number.isNaN(Date.parse(e.at))),
    ).toBe(true);
    // every change names who made it: here the bootstrap token
    expect(events[1]!.detail).toEqual({ actor: "token:ADMIN_TOKEN", fields: "status", status: "active" }); // enable
    expect(events[4]!.detail).toEqual({ actor: "token:ADMIN_TOKEN", fields: "name" });
    expect(next_before).toBeNull();
    expect(text).not.toContain(c.client_secret);
    expect(text).not.toContain(rotated.client_secret);
  });

  it("token and disconnect events from the provider are listed too (disconnect: client id, no plid)", async () => {
    // the store batches events into R2: first move what earlier tests left in any shard
    await flushAudit();
    const { code } = await mintFor(HONG.phone);
    expect((await exchange(code)).status).toBe(200);
    await exchange(code); // replay: refused
    await flushAudit();
    const { events } = (await (await admin("GET", "/admin/audit?type=code.")).json()) as {
      events: { type: string; outcome: string }[];
    };
    // the refusal is recorded at once, the redemption counted until the flush: either may be newer
    expect(
      events
        .slice(0, 2)
        .map((e) => [e.type, e.outcome])
        .sort(),
    ).toEqual([
      ["code.redeemed", "ok"],
      ["code.refused", "refused"],
    ]);

    const { plid } = await mintFor(KIM.phone);
    const before =
      ((await (await admin("GET", "/admin/audit?type=disconnect&limit=1")).json()) as { events: { id: string }[] })
        .events[0]?.id ?? null;
    const disconnected = await call("/v1/user/disconnect", {
      method: "POST",
      headers: { ...FORM, Authorization: basic(DEMO.clientId, DEMO.secret) },
      body: form({ plid }),
    });
    expect(disconnected.status).toBe(200);
    // written after the answer (waitUntil): wait for it
    const text = await vi.waitFor(async () => {
      await flushAudit();
      const t = await (await admin("GET", "/admin/audit?type=disconnect&limit=1")).text();
      const [e] = (JSON.parse(t) as { events: { id: string; type: string; client_id: string; outcome: string }[] })
        .events;
      expect(e).toMatchObject({ type: "disconnect", client_id: DEMO.clientId, outcome: "ok" });
      expect(e!.id).not.toBe(before);
      return t;
    });
    expect(text).not.toContain(plid);
  });

  it("pages by `before`: no event is skipped or repeated; `limit` is bounded", async () => {
    for (let i = 0; i < 5; i++) await createClient({ name: `Paging ${i}` });
    await flushAudit();
    const all = (await (await admin("GET", "/admin/audit?limit=500")).json()) as { events: { id: string }[] };
    const seen: { id: string; at: string }[] = [];
    let before: string | null = null;
    for (let guard = 0; guard < 100; guard++) {
      const q: string = before === null ? "" : `&before=${encodeURIComponent(before)}`;
      const page = (await (await admin("GET", `/admin/audit?limit=2${q}`)).json()) as {
        events: { id: string; at: string }[];
        next_before: string | null;
      };
      expect(page.events.length).toBeLessThanOrEqual(2);
      seen.push(...page.events);
      before = page.next_before;
      if (before === null) break;
    }
    expect(seen.map((e) => e.id)).toEqual(all.events.map((e) => e.id));
    expect(seen.map((e) => e.at)).toEqual(
      seen
        .map((e) => e.at)
        .sort()
        .reverse(),
    );
    await expectError(await admin("GET", "/admin/audit?limit=0"), 400, "invalid_request", /limit/);
    await expectError(await admin("GET", "/admin/audit?limit=501"), 400, "invalid_request", /limit/);
    await expectError(await admin("GET", "/admin/audit?before=x"), 400, "invalid_request", /before/);
  });
});

describe("events_uri (docs/events.md): where a client's signed events go", () => {
  it("https is accepted, shown, changed and removed; http on a loopback host only in DEV_MODE", async () => {
    const res = await admin("POST", "/admin/clients", {
      json: { name: "Events", redirect_uris: ["https://ev.example/cb"], events_uri: "https://ev.example/events" },
    });
    expect(res.status).toBe(201);
    const c = (await res.json()) as { client_id: string; events_uri: string | null };
    expect(c.events_uri).toBe("https://ev.example/events");
    const patched = await admin("PATCH", `/admin/clients/${c.client_id}`, {
      json: { events_uri: "http://127.0.0.1:9000/events" },
    });
    expect(((await patched.json()) as { events_uri: string }).events_uri).toBe("http://127.0.0.1:9000/events");
    const cleared = await admin("PATCH", `/admin/clients/${c.client_id}`, { json: { events_uri: null } });
    expect(((await cleared.json()) as { events_uri: string | null }).events_uri).toBeNull();
  });

  it.each([
    ["http://ev.example/events"],
    ["https://user:pw@ev.example/events"],
    ["https://ev.example/events#x"],
    ["ftp://ev.example/events"],
    ["not a uri"],
  ])("refuses %s with 400 invalid_request", async (uri) => {
    await expectError(
      await admin("POST", "/admin/clients", {
        json: { name: "E", redirect_uris: ["https://e.example/cb"], events_uri: uri },
      }),
      400,
      "invalid_request",
      /^The value of events_uri is not valid: /,
    );
  });
});
