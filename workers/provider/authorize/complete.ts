// How the protocol takes an app's sign-in back (spec §4.1): the code minted, the automatic-login
// grant of an opt-in, and the redirect to the app with the code and the state byte for byte.

import { redirect } from "../../core/http";
import { hostCookie } from "../../core/cookies";
import type { RequestContext } from "../../core/router";
import { providerConfig, type ProviderEnv } from "../config";
import { mintCode } from "../codes";
import {
  deleteAutoLoginGrant,
  deviceOf,
  keepOwnGrant,
  newDevice,
  putAutoLoginGrant,
  replaceDevice,
  subscriberById,
  linkExists,
  touchLink,
  type Subscriber,
} from "../store/directory/index";
import { auditRecord } from "../store/one-time/index";
import {
  type SigninConfig,
  AUTO_COOKIE,
  deviceIdOf,
  proofDetail,
  type SigninEnd,
  mayTest,
  testingStop,
  passkeyOffer,
} from "../signin/index";
import { redirectLocation } from "./redirects";

/**
 * Mints the code of a finished interactive sign-in and redirects. Opting in creates the grant of a
 * fresh device id and sets its cookie: a device id the browser already held (which someone may
 * have planted or copied) is never promoted to a grant (`replaceDevice`). Otherwise the same
 * subscriber's grants are kept (the login reports Y/N). Either way no grant of another subscriber
 * stays on the device id the browser presented, for any client: they ended at the right code
 * (`endOtherSubscribersOnDevice`) and end again here, since the consent page may be answered with
 * another device cookie than the code page was. Null, with nothing minted, when the subscriber is
 * gone or the plid ended meanwhile.
 */
export async function complete(
  req: Request,
  env: ProviderEnv,
  rc: RequestContext,
  cfg: SigninConfig,
  c: SigninEnd,
  /** The code or consent page's probe found a platform authenticator: the end may offer a passkey. */
  pk = false,
): Promise<Response | null> {
  // An app's sign-in asks consent (its purpose), so it always ends with what the person shares.
  const { consented } = c.shared!;
  // Ids are never given twice (migrations/0009_subscriber_ids.sql): a subscriber removed, or whose
  // number was reassigned, since the sign-in began is simply gone, and the sign-in ends with nothing.
  const subscriber = consented?.subscriber ?? (await subscriberById(env, c.subscriberId));
  if (!subscriber) return null;
  // a testing app ends only for its team and its test numbers (a team number that passed to
  // another person gets here: the number was the team's, the person is not)
  if (!(await mayTest(env, c.client, c.subscriberId, c.tx.subscriber?.review === true))) return testingStop(env, rc, c);
  // proven by SMS, in a browser that can make a passkey: the offer first; its answer ends here (finish)
  const offer = await passkeyOffer(req, env, rc, c, pk);
  return offer ?? finish(req, env, rc, cfg, c, subscriber);
}

/**
 * The code minted and the redirect (`complete` once nothing is left to ask, or the passkey offer's
 * answer, authorize/offer.ts). Null, with nothing minted, when the plid ended meanwhile.
 */
export async function finish(
  req: Request,
  env: ProviderEnv,
  rc: RequestContext,
  cfg: SigninConfig,
  c: SigninEnd,
  subscriber: Subscriber,
): Promise<Response | null> {
  const { plid, items, consented } = c.shared!;
  const pcfg = providerConfig(env);
  const cookies: string[] = [];
  let autoLogin: { deviceHash: string; automatic: boolean } | null = null;
  const existing = deviceIdOf(req);
  if (c.optIn) {
    const { id: deviceId, device } = await newDevice(env, c.subscriberId);
    const deviceHash = device.hash;
    if (existing) await replaceDevice(env, await deviceOf(env, existing), device, c.subscriberId);
    await putAutoLoginGrant(env, {
      device,
      clientId: c.client.clientId,
      subscriberId: c.subscriberId,
      expiresAt: Date.now() + cfg.autoLoginTtlMs,
    });
    // An end of the plid (a disconnect, /account) deletes the client's grants of this subscriber;
    // one that landed after the link was read but before this grant missed it: the grant stands
    // only while the link does, or it would log this device in again after the disconnect.
    if (!(await linkExists(env, c.client.clientId, plid))) {
      await deleteAutoLoginGrant(env, device, c.client.clientId);
      return null;
    }
    cookies.push(hostCookie(AUTO_COOKIE, deviceId, { maxAgeSeconds: Math.floor(cfg.autoLoginTtlMs / 1000) }));
    autoLogin = { deviceHash, automatic: false };
  } else if (existing) {
    // Not ticked: this subscriber's grants on this device are kept, other subscribers' end.
    // prompt=N (the app wants no automatic login) changes only what this login reports.
    const device = await deviceOf(env, existing);
    const own = await keepOwnGrant(env, device, c.subscriberId, c.client.clientId);
    if (own && c.tx.prompt !== "N") autoLogin = { deviceHash: device.hash, automatic: false };
  }
  const code = await mintCode(env, pcfg.oneTimeShards, pcfg.codeTtlMs, {
    clientId: c.client.clientId,
    subscriber,
    plid,
    items,
    redirectUri: c.tx.redirectUri,
    autoLogin,
    ...(c.optIn ? { firstReportTtlMs: cfg.autoLoginTtlMs } : {}),
    codeChallenge: c.tx.codeChallenge,
    ...(c.tx.oidc && {
      oidc: {
        ...c.tx.oidc,
        authTime: c.tx.provenAt ?? Date.now(),
        amr: c.tx.passkey ? ["user", c.tx.passkeySynced ? "swk" : "hwk"] : ["sms"],
      },
    }),
    audit: [
      ...(consented ? [consented.audit] : []),
      auditRecord("signin.success", c.client.clientId, "ok", {
        mode: "interactive",
        ...proofDetail(c.tx),
        autoLogin: c.optIn,
        ...(c.tx.subscriber?.review ? { testNumber: true } : {}),
      }),
    ],
  });
  if (!consented) rc.waitUntil(touchLink(env, c.client.clientId, plid));
  rc.log.event = "signin.success";
  return redirect(
    302,
    redirectLocation(c.tx.redirectUri, [
      ["code", code],
      ["state", c.tx.state],
    ]),
    { cookies },
  );
}
