// The gated steps (docs/signin.md "Gated steps"): a code entry and an agreement of an app's
// sign-in in one store call each, with no read of the record before.

import { readHostCookie } from "../../core/cookies";
import { sha256 } from "../../core/crypto";
import { isRandomValue } from "../../core/spec";
import { providerConfig } from "../config";
import { findClient } from "../store/clients";
import { storeFor } from "../store/one-time/index";
import { consented } from "./consent";
import { consentTerms, flowOf } from "./flow";
import { networkKey, numberLimits } from "./limits";
import type { SigninPurpose, Submission } from "./purpose";
import { challengeHash, stepGate, TX_COOKIE, txKey } from "./transaction";
import { codeProven, codeRefused } from "./verify";

/**
 * The code and the consent of an app's sign-in in one store call each, with no read of the record
 * before: the object checks the page's CSRF token and browser binding itself (`StepGate`), and the
 * client is read after, from the record (or, for the consent, first, from the page's `app`, since
 * the agreement must answer the app's terms as they are). Whatever the call leaves unsettled (the
 * sign-in elsewhere, ended or expired, another browser or token, an /account sign-in), and every
 * other submission, goes the full way: null.
 */
export async function gatedStep(s: Submission, purpose: SigninPurpose): Promise<Response | null> {
  const { req, env, rc, cfg, shards, params } = s;
  const id = params.get("tx");
  const csrf = params.get("csrf");
  const browser = readHostCookie(req, TX_COOKIE);
  if (!isRandomValue(id) || csrf === undefined || browser === undefined) return null;
  if (["phoneNo", "lang", "cancel", "restart", "resend"].some((p) => params.has(p))) return null;
  const otp = params.get("otp")?.replace(/\s/g, "");
  const agree = params.get("agree");
  const stub = storeFor(env, id, shards);
  if (otp !== undefined && agree === undefined) {
    if (!/^\d{6}$/.test(otp)) return null;
    const [key, gate, presented, netKey] = await Promise.all([
      txKey(id),
      stepGate(csrf, browser),
      sha256(otp).then((digest) => challengeHash(id, digest)),
      networkKey(req),
    ]);
    const r = await stub.signinVerifyGated({
      key,
      gate,
      netKey,
      presented,
      limits: numberLimits(cfg),
      autoLoginOptIn: params.get("autoLogin") === "Y",
    });
    if (r.result === "unsettled" || r.result === "conflict") return null;
    rc.log.clientId = r.record.clientId;
    const f = await flowOf(s, purpose, { id, key, stub, tx: r.record }, csrf);
    if (f instanceof Response) return f;
    return codeRefused(f, r) ?? codeProven(f);
  }
  const app = params.get("app");
  if (agree !== "Y" || otp !== undefined || app === undefined) return null;
  const client = await findClient(env, app, providerConfig(env).clientCacheMs);
  if (!client || params.get("terms") !== consentTerms(client).version) return null;
  const [key, gate] = await Promise.all([txKey(id), stepGate(csrf, browser)]);
  const r = await stub.signinFinishGated(key, gate, app);
  if ("result" in r) return null;
  rc.log.clientId = app;
  const f = await flowOf(s, purpose, { id, key, stub, tx: r.record }, csrf, client);
  return f instanceof Response ? f : consented(f, r.record);
}
