// A passkey sign-in (docs/passkeys.md "Signing in"): the identify page's passkey form posts an
// assertion instead of a number. The user handle names the person's shard; the library checks the
// assertion against the stored key for this host, origin and the page's challenge with the user
// verified; the shard then takes the challenge once, checks the passkey is usable and advances its
// counter, in one step. The person is then proven with no SMS, and the sign-in goes on as after a
// right code: consent when due (a record at the consent step), else the purpose's end.

import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { formatKst } from "../../dates";
import {
  toSubscriber,
  type Subscriber,
  type LinkRow,
  endPasskeys,
  findPasskey,
  isPasskeyHandle,
  passkeyConfirmed,
  usePasskey,
  riskFrom,
  riskUntil,
} from "../../store/directory/index";
import { audit } from "../../store/one-time/index";
import { tally } from "../../store/metrics/index";
import { carrierDirectory, CarrierUnavailable } from "../carrier";
import { storeConfig } from "../../store/config";
import { failure, limited, refusalAlert, render, type Flow } from "../flow";
import { t } from "../i18n";
import { hitIp, ipRefusal } from "../limits";
import { identifyPage, type Alert, type PageResult } from "../pages";
import { numberProven } from "../proven";
import { pt } from "./i18n";
import { challengeKey, credentialJson, signinChallenge, userHandleOf, verifiedAssertion } from "./webauthn";

/** A passkey sign-in that did not prove anyone: the identify page again with why, and its audit. */
function refused(f: Flow, reason: string, alert: Alert, result: PageResult = { status: 403 }): Response {
  failure(f, `passkey_${reason}`);
  f.rc.log.event = `signin.passkey_${reason}`;
  if (f.client.clientId) tally(f.env, f.rc, "passkey.refused", f.client.clientId);
  return identifyPage(f.ctx, {}, alert, result);
}

/**
 * The number of a passkey's person still theirs (docs/passkeys.md "Still the person's number"):
 * with the carrier's API, asked again once the last confirmation is older than
 * PASSKEY_RECHECK_SECONDS; a number it no longer confirms for this person ends their passkeys.
 * With the embedded directory its own state is the truth (the person is there, holding the number).
 */
async function stillTheirs(f: Flow, person: Subscriber, confirmedAt: number): Promise<"yes" | "no" | "unavailable"> {
  if (f.cfg.carrierDirectory !== "http" || Date.now() - confirmedAt < f.cfg.passkeyRecheckMs) return "yes";
  try {
    const c = await carrierDirectory(f.env).confirm(person.telco, person.name, person.phone);
    tally(f.env, f.rc, "carrier.ok", null);
    if (c && c.subscriber.id === person.id) {
      await passkeyConfirmed(f.env, person.id, Date.now());
      return "yes";
    }
  } catch (err) {
    if (!(err instanceof CarrierUnavailable)) throw err;
    tally(f.env, f.rc, "carrier.failed", null);
    return "unavailable";
  }
  const ended = await endPasskeys(f.env, person.id);
  f.rc.waitUntil(audit(f.env, "passkey.ended", null, "ok", { reason: "carrier_unconfirmed", passkeys: ended }));
  return "no";
}

/** The identify page's passkey form answered (`passkey` holds the assertion). */
export async function passkeySignIn(f: Flow): Promise<Response> {
  const L = f.ctx.lang;
  const tx = f.h.tx;
  // offered on the identify page only, and never in a WebView that said it is one
  if ((tx.step !== "identify" && tx.step !== "moved") || tx.isHybrid)
    return render(f, { text: pt(L, "errRefused") }, { status: 400 });
  // a passkey submission counts against its network's step-1 limit, as a number submitted does
  const ip = f.ipHit ? ipRefusal(f.ipHit, f.cfg) : await hitIp(f.env, f.shards, f.cfg, f.req);
  if (ip) {
    failure(f, "ip_limited");
    return identifyPage(f.ctx, {}, refusalAlert(L, ip), limited(ip));
  }
  const a = credentialJson<AuthenticationResponseJSON>(f.params.get("passkey"));
  const handle = a && userHandleOf(a);
  if (!a || !isPasskeyHandle(handle)) return refused(f, "malformed", { text: pt(L, "errRefused") }, { status: 400 });
  const found = await findPasskey(f.env, a.id, handle);
  if (!found) return refused(f, "unknown", { text: pt(L, "errUnknown") });
  const challenge = await signinChallenge(f.params.get("tx")!);
  const counter = await verifiedAssertion(f.env, f.req, a, challenge, found.passkey);
  if (counter === null) return refused(f, "invalid", { text: pt(L, "errRefused") });
  const sub = found.passkey.subscriberId;
  // the person and their link to the app come with the step that takes the challenge (one call)
  const linkOf = f.purpose.consent ? f.client.clientId : undefined;
  const used = await usePasskey(f.env, sub, a.id, await challengeKey(challenge), tx.expiresAt, counter, linkOf);
  if (!used.ok) {
    if (used.reason === "pending")
      return refused(f, "pending", {
        text: pt(L, "errPending", { until: formatKst(found.passkey.usableAt, L) }),
      });
    if (used.reason === "replayed") return refused(f, "replayed", { text: pt(L, "errReplayed") });
    if (used.reason === "counter") return refused(f, "counter", { text: pt(L, "errRefused") });
    return refused(f, "unknown", { text: pt(L, "errUnknown") });
  }
  const person = used.person ? toSubscriber(used.person) : null;
  if (!person) return refused(f, "unknown", { text: pt(L, "errUnknown") });
  const still = await stillTheirs(f, person, found.confirmedAt);
  if (still === "unavailable")
    return refused(
      f,
      "carrier_unavailable",
      { text: t(L, "errCarrierUnavailable") },
      { status: 503, retryAfterSeconds: 5 },
    );
  if (still === "no") return refused(f, "unconfirmed", { text: pt(L, "errRecheck") });
  // a passkey signs in during a risk window (that is what it is for), without automatic login
  const risk = riskUntil(riskFrom(used.person!), storeConfig(f.env).riskWindowMs);
  return proven(f, person, a.id, used.link ?? null, risk, found.passkey.device === "synced");
}

/** The person proven by passkey `credentialId` (`link`: theirs to the app): consent when due, else the purpose's end. */
function proven(
  f: Flow,
  person: Subscriber,
  credentialId: string,
  link: LinkRow | null,
  risk: number | null,
  synced: boolean,
): Promise<Response> {
  return numberProven(f, {
    person,
    link,
    risk,
    by: "passkey",
    record: { passkey: credentialId, ...(synced && { passkeySynced: true as const }) },
  });
}
