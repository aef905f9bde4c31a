import { env } from "../../support/env";
import { describe, expect, it } from "vitest";
import { deviceOfSubscriber } from "../../support/shards";
import { randomToken } from "../../../workers/core/crypto";
import { basic, call, DEMO, FORM, form, HONG, KIM, LIMITED, mintFor, tokenFor, userMe } from "../../support/helpers";
import { findLink } from "../../../workers/provider/store/directory/links";
import { findAutoLoginGrant, putAutoLoginGrant } from "../../../workers/provider/store/directory/grants";

function disconnect(plid: string | null, authorization?: string, body?: string): Promise<Response> {
  return call("/v1/user/disconnect", {
    method: "POST",
    headers: { ...FORM, ...(authorization !== undefined ? { Authorization: authorization } : {}) },
    body: body ?? (plid === null ? "" : form({ plid })),
  });
}

describe("POST /v1/user/disconnect (spec §4.4, §5; docs/architecture.md §4.7)", () => {
  it("answers exactly {code, error, message} and removes the link", async () => {
    const { plid, subscriberId } = await mintFor(HONG.phone);
    const res = await disconnect(plid, basic(DEMO.clientId, DEMO.secret));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, string>;
    expect(Object.keys(body).sort()).toEqual(["code", "error", "message"]);
    expect(body.code).toBe("0000");
    expect(body.error).toBe("success");
    expect(await findLink(env, DEMO.clientId, subscriberId)).toBeNull();
  });

  it("the next login gets a new plid", async () => {
    const before = await mintFor(HONG.phone);
    await disconnect(before.plid, basic(DEMO.clientId, DEMO.secret));
    const after = await mintFor(HONG.phone);
    expect(after.plid).not.toBe(before.plid);
  });

  it("ends the client's automatic-login grants for that subscriber, and only that client's", async () => {
    const { plid, subscriberId } = await mintFor(KIM.phone);
    await mintFor(KIM.phone, { client: LIMITED });
    const device = randomToken(32);
    await putAutoLoginGrant(env, {
      device: deviceOfSubscriber(subscriberId, device),
      clientId: DEMO.clientId,
      subscriberId,
      expiresAt: Date.now() + 86400_000,
    });
    await putAutoLoginGrant(env, {
      device: deviceOfSubscriber(subscriberId, device),
      clientId: LIMITED.clientId,
      subscriberId,
      expiresAt: Date.now() + 86400_000,
    });
    expect((await disconnect(plid, basic(DEMO.clientId, DEMO.secret))).status).toBe(200);
    expect(await findAutoLoginGrant(env, deviceOfSubscriber(subscriberId, device), DEMO.clientId)).toBeNull();
    expect(await findAutoLoginGrant(env, deviceOfSubscriber(subscriberId, device), LIMITED.clientId)).not.toBeNull();
    expect(await findLink(env, LIMITED.clientId, subscriberId)).not.toBeNull();
  });

  it("a token issued before the disconnect can no longer read the user", async () => {
    const { token, plid } = await tokenFor(HONG.phone);
    await disconnect(plid, basic(DEMO.clientId, DEMO.secret));
    expect((await userMe(token)).status).toBe(401);
  });

  it("a plid unknown to the client is 400 invalid_request 'The value of plid is not valid.'", async () => {
    const res = await disconnect("00000000-0000-4000-8000-000000000000", basic(DEMO.clientId, DEMO.secret));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "invalid_request", message: "The value of plid is not valid." });
  });

  it("another client's plid is not valid for this client, and stays linked", async () => {
    const { plid, subscriberId } = await mintFor(HONG.phone, { client: LIMITED });
    expect((await disconnect(plid, basic(DEMO.clientId, DEMO.secret))).status).toBe(400);
    expect(await findLink(env, LIMITED.clientId, subscriberId)).not.toBeNull();
  });

  it("a missing plid is 400 invalid_request naming it", async () => {
    const res = await disconnect(null, basic(DEMO.clientId, DEMO.secret));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "invalid_request", message: "A required item plid is missing." });
  });

  it("takes Basic only: credentials as parameters are 'A client id must be provided' (401)", async () => {
    const { plid } = await mintFor(HONG.phone);
    const res = await disconnect(null, undefined, form({ plid, client_id: DEMO.clientId, client_secret: DEMO.secret }));
    expect(res.status).toBe(401);
    expect(res.headers.get("WWW-Authenticate")).toMatch(/^Basic/);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_client");
  });

  it("a wrong secret is 401 invalid_client and disconnects nothing", async () => {
    const { plid, subscriberId } = await mintFor(HONG.phone);
    const res = await disconnect(plid, basic(DEMO.clientId, "wrong-secret"));
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "invalid_client", message: "Bad client credentials." });
    expect(await findLink(env, DEMO.clientId, subscriberId)).not.toBeNull();
  });

  it("GET is 405 with Allow: POST", async () => {
    const res = await call("/v1/user/disconnect");
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("POST");
    expect(await res.json()).toEqual({ error: "method_not_allowed", message: expect.any(String) });
  });
});
