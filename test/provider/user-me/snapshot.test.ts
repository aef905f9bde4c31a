// /v1/user/me reads one Durable Object and no D1 (docs/storage.md "Snapshots"): the code's grant
// carries the subscriber and consented items of its sign-in, the token copies them, and every way
// a plid ends marks it revoked in the object holding its codes and tokens.
// Invariants: a token (or code) issued before its plid ended reads (redeems) nothing after; the
// record from a snapshot equals the record built from the directory for the same subscriber.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { insertSubscriber, shardExec } from "../../support/shards";
import { describe, expect, it } from "vitest";
import { decryptField } from "../../../workers/core/crypto";
import { ENCRYPTED_ITEMS, IDENTITY_ITEMS } from "../../../workers/core/spec";
import { subscriberByPhone } from "../../../workers/provider/store/directory/directory";
import { userRecordJson } from "../../../workers/provider/user-me/record";
import userMeWorker from "../../../workers/provider/user-me/index";
import { admin, asClient, createClient } from "../../support/admin";
import { env } from "../../support/env";
import {
  basic,
  call,
  DEMO,
  exchange,
  FORM,
  form,
  HONG,
  KIM,
  LEE,
  LIMITED,
  mintFor,
  SMITH,
  tokenFor,
  userMe,
} from "../../support/helpers";

async function disconnect(plid: string) {
  return call("/v1/user/disconnect", {
    method: "POST",
    headers: { ...FORM, Authorization: basic(DEMO.clientId, DEMO.secret) },
    body: form({ plid }),
  });
}

describe("/v1/user/me without D1", () => {
  it("reads the token's record with D1 unavailable (one store call; the client from the isolate's cache)", async () => {
    const { token } = await tokenFor(HONG.phone);
    const noD1 = new Proxy(
      {},
      {
        get() {
          throw new Error("D1 used on the user/me path");
        },
      },
    );
    const ctx = createExecutionContext();
    const res = await userMeWorker.fetch!(
      new Request("https://login.example/v1/user/me", { headers: { Authorization: `Bearer ${token}` } }) as never,
      { ...env, DB: noD1 } as never,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { user: { plid: string } }).user.plid).toBeTruthy();
  });

  it("the record from a snapshot equals the record built from the directory, for every seed subscriber and both clients", async () => {
    for (const who of [HONG, KIM, SMITH, LEE]) {
      for (const client of [DEMO, LIMITED]) {
        const now = Date.now();
        const { token, plid } = await tokenFor(who.phone, { client, secret: client.secret });
        const got = ((await (await userMe(token)).json()) as { user: Record<string, string> }).user;
        const s = (await subscriberByPhone(env, who.phone))!;
        const want = JSON.parse(
          await userRecordJson({
            plid,
            items: client.items.length ? client.items : IDENTITY_ITEMS,
            subscriber: s,
            autoLoginYn: "N",
            autoStatusCheck: "N",
            secret: client.secret,
            now,
          }),
        ) as Record<string, string>;
        expect(Object.keys(got)).toEqual(Object.keys(want));
        for (const [k, v] of Object.entries(want)) {
          // encryption is deterministic (key = IV) but compare plaintexts to say what is meant
          if (ENCRYPTED_ITEMS.has(k as never))
            expect(await decryptField(client.secret, got[k]!)).toBe(await decryptField(client.secret, v));
          else expect(got[k]).toBe(v);
        }
      }
    }
  });

  it("the record reflects the directory at sign-in: a change after the code was issued shows at the next sign-in", async () => {
    const { code } = await mintFor(SMITH.phone);
    await shardExec("UPDATE people SET name = ? WHERE phone = ?", "John Q. Smith", SMITH.phone);
    try {
      const tok = (await (await exchange(code)).json()) as { access_token: string };
      const user = ((await (await userMe(tok.access_token)).json()) as { user: Record<string, string> }).user;
      expect(await decryptField(DEMO.secret, user.name!)).toBe("John Smith");
      const { token } = await tokenFor(SMITH.phone);
      const next = ((await (await userMe(token)).json()) as { user: Record<string, string> }).user;
      expect(await decryptField(DEMO.secret, next.name!)).toBe("John Q. Smith");
    } finally {
      await shardExec("UPDATE people SET name = ? WHERE phone = ?", SMITH.name, SMITH.phone);
    }
  });
});

describe("an ended plid ends its codes and tokens at once", () => {
  it("a token issued before a disconnect reads nothing after it (401)", async () => {
    const { token, plid } = await tokenFor(KIM.phone);
    expect((await disconnect(plid)).status).toBe(200);
    expect((await userMe(token)).status).toBe(401);
  });

  it("a code issued before a disconnect does not redeem after it", async () => {
    const { code, plid } = await mintFor(LEE.phone);
    expect((await disconnect(plid)).status).toBe(200);
    const res = await exchange(code);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { message: string }).message).toMatch(/^Invalid authorization code/);
  });

  it("a new sign-in after the disconnect gets a new plid, whose tokens read", async () => {
    const first = await tokenFor(HONG.phone);
    expect((await disconnect(first.plid)).status).toBe(200);
    const again = await tokenFor(HONG.phone);
    expect(again.plid).not.toBe(first.plid);
    expect((await userMe(again.token)).status).toBe(200);
  });

  it("an operator deleting a client ends its users' tokens", async () => {
    const c = await createClient({ name: "Gone Soon", redirect_uris: ["https://gone.example/cb"], items: ["gender"] });
    const { token } = await tokenFor(KIM.phone, { client: asClient(c), secret: c.client_secret });
    expect((await admin("DELETE", `/admin/clients/${c.client_id}`)).status).toBe(200);
    expect((await userMe(token)).status).toBe(401);
  });

  it("an operator removing a subscriber ends their tokens with every app", async () => {
    await insertSubscriber({ telco: "S", phone: "01099990011", name: "삭제될", ci: "CI-remove" });
    const a = await tokenFor("01099990011");
    const b = await tokenFor("01099990011", { client: LIMITED, secret: LIMITED.secret });
    expect((await admin("DELETE", "/admin/directory/01099990011")).status).toBe(200);
    expect((await userMe(a.token)).status).toBe(401);
    expect((await userMe(b.token)).status).toBe(401);
  });
});
