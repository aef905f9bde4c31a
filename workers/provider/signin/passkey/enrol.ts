// Making a passkey (docs/passkeys.md "Enrolment"): a ticket the service signed for a proven person
// (after an SMS sign-in's end, or on /account) and the browser's registration, checked by the
// library, stored by the person's shard in one step with its rules: the ticket taken once, at most
// PASSKEY_MAX, no SMS-proven passkey while the person has an active one (that one must prove the
// new one), and an SMS-proven one usable only after PASSKEY_ACTIVATION_SECONDS with a notice SMS
// now and one when it becomes usable. Test numbers never get one, nor a number in its risk window
// (a SIM change or a port within SIGNIN_RISK_WINDOW_SECONDS).

import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import { readHostCookie } from "../../../core/cookies";
import { sha256 } from "../../../core/crypto";
import type { RequestContext } from "../../../core/router";
import type { ProviderEnv } from "../../config";
import {
  reviewEntryById,
  addPasskey,
  passkeyEnrolment,
  PASSKEY_MAX,
  type PasskeyRow,
  dirAt,
  homeOfId,
  riskFrom,
  riskUntil,
} from "../../store/directory/index";
import { tally } from "../../store/metrics/index";
import { audit, sameHash } from "../../store/one-time/index";
import { signinConfig } from "../config";
import { storeConfig } from "../../store/config";
import { TX_COOKIE } from "../transaction";
import { sendPasskeyNotice } from "../../store/flows/passkey-notices";
import { tellStreams } from "../../store/flows/end-plids";
import { passkeyReason } from "../../store/flows/ssf-events";
import { pt } from "./i18n";
import type { Lang } from "../i18n";
import {
  challengeKey,
  credentialJson,
  enrolTicket,
  relyingParty,
  verifiedRegistration,
  type EnrolTicket,
} from "./webauthn";

/** Why an enrolment made nothing. */
export type EnrolRefusal =
  | "invalid"
  | "expired"
  | "gone"
  | "test"
  | "replayed"
  | "full"
  | "needs_passkey"
  | "exists"
  /** The number's SIM changed or it was ported within SIGNIN_RISK_WINDOW_SECONDS (store/directory/risk.ts). */
  | "risk";

export type EnrolResult = { ok: true; usableAt: number } | { ok: false; reason: EnrolRefusal };

/** What the browser's `navigator.credentials.create` is asked (the page's script passes it on). */
export interface CreationOptions {
  challenge: string;
  rp: { id: string; name: string };
  user: { id: string; name: string; displayName: string };
  exclude: string[];
}

/**
 * The person's enrolment, when they may make one now with this proof: their user handle and the
 * ids to exclude; null when they may not (gone, a test number, PASSKEY_MAX reached, or an SMS
 * proof while they have an active passkey).
 */
export async function enrolmentOf(
  env: ProviderEnv,
  subscriberId: number,
  provenWith: string | undefined,
): Promise<{ handle: string; passkeys: PasskeyRow[] } | null> {
  // the person, their handle and passkeys in one call to their shard; none for a test number
  const { person, handle, passkeys } = await passkeyEnrolment(env, subscriberId);
  if (handle === null || person === null || passkeys.length >= PASSKEY_MAX) return null;
  const now = Date.now();
  // none while a SIM change or a port keeps the number at risk (a cloned SIM keeps no passkey)
  if (riskUntil(riskFrom(person), storeConfig(env).riskWindowMs, now) !== null) return null;
  const active = passkeys.filter((k) => k.usableAt <= now);
  if (provenWith === undefined ? active.length > 0 : !active.some((k) => k.credentialId === provenWith)) return null;
  return { handle, passkeys };
}

/** The hash of the browser's binding cookie, which a ticket is bound to. */
export async function browserHashOf(req: Request): Promise<string> {
  return sha256(readHostCookie(req, TX_COOKIE) ?? "");
}

/** A signed ticket and the creation options of a person's enrolment page. */
export async function enrolPage(
  req: Request,
  env: ProviderEnv,
  e: { handle: string; passkeys: PasskeyRow[] },
  t: Omit<EnrolTicket, "c" | "e" | "b">,
  label: string,
): Promise<{ token: string; options: CreationOptions }> {
  const { token, ticket } = await enrolTicket(env, { ...t, b: await browserHashOf(req) });
  const rp = relyingParty(req);
  return {
    token,
    options: {
      challenge: ticket.c,
      rp: { id: rp.id, name: label },
      // what the device shows under the passkey: the masked number, never the number itself
      user: { id: e.handle, name: label, displayName: label },
      exclude: e.passkeys.map((k) => k.credentialId),
    },
  };
}

/** A short name of the device from its User-Agent (what /account lists it by). */
export function deviceName(ua: string | null): string {
  const u = ua ?? "";
  const os = /iPhone|iPad/.test(u)
    ? "iPhone"
    : /Android/.test(u)
      ? "Android"
      : /Mac OS X/.test(u)
        ? "Mac"
        : /Windows/.test(u)
          ? "Windows"
          : /CrOS/.test(u)
            ? "ChromeOS"
            : /Linux/.test(u)
              ? "Linux"
              : "";
  const browser = /SamsungBrowser/.test(u)
    ? "Samsung Internet"
    : /Edg\//.test(u)
      ? "Edge"
      : /Chrome\//.test(u)
        ? "Chrome"
        : /Firefox\//.test(u)
          ? "Firefox"
          : /Safari\//.test(u)
            ? "Safari"
            : "";
  return [browser, os].filter(Boolean).join(" · ") || "WebAuthn";
}

/** Takes a ticket's challenge once without making anything (an offer answered "not now"); false when taken before. */
export async function takeTicket(env: ProviderEnv, ticket: EnrolTicket): Promise<boolean> {
  return dirAt(env, homeOfId(ticket.s)).takePasskeyChallenge(await challengeKey(ticket.c), ticket.e);
}

/** Makes the passkey of a ticket from the browser's registration (the ticket taken either way). */
export async function enrol(
  req: Request,
  env: ProviderEnv,
  rc: RequestContext,
  ticket: EnrolTicket,
  credential: string | undefined,
): Promise<EnrolResult> {
  const refuse = (reason: EnrolRefusal): EnrolResult => {
    rc.waitUntil(audit(env, "passkey.refused", null, "refused", { reason, proof: ticket.w }));
    return { ok: false, reason };
  };
  if (!sameHash(await browserHashOf(req), ticket.b)) return refuse("invalid");
  const json = credentialJson<RegistrationResponseJSON>(credential);
  const verified = json && (await verifiedRegistration(env, req, json, ticket.c));
  if (!verified) {
    if (!(await takeTicket(env, ticket))) return refuse("replayed");
    return refuse("invalid");
  }
  const entry = await reviewEntryById(env, ticket.s);
  if (!entry) return refuse("gone");
  if (entry.testOtpHash !== null || entry.review !== null) {
    await takeTicket(env, ticket);
    return refuse("test");
  }
  const now = Date.now();
  const usableAt = ticket.w === "sms" ? now + signinConfig(env).passkeyActivationMs : now;
  const added = await addPasskey(
    env,
    {
      subscriberId: ticket.s,
      credentialId: verified.id,
      publicKey: verified.publicKey,
      counter: verified.counter,
      transports: verified.transports,
      name: deviceName(req.headers.get("User-Agent")),
      device: verified.device,
      madeWith: ticket.w,
      usableAt,
      challenge: await challengeKey(ticket.c),
      challengeUntil: ticket.e,
      provenWith: ticket.k,
      riskWindowMs: storeConfig(env).riskWindowMs,
    },
    ticket.l,
  );
  if (!added.ok) {
    const reason: EnrolRefusal =
      added.reason === "proof_inactive" || added.reason === "needs_passkey" ? "needs_passkey" : added.reason;
    return refuse(reason);
  }
  // the person's apps with a Shared Signals stream hear of it (a CAEP credential-change, create)
  await tellStreams(env, ticket.s, null, passkeyReason("created", verified.device, verified.transports), now);
  tally(env, rc, "passkey.created", null);
  rc.waitUntil(audit(env, "passkey.created", null, "ok", { proof: ticket.w, device: verified.device }));
  // an SMS proof alone: the number hears of it now, and again when it becomes usable (a job)
  if (ticket.w === "sms") rc.waitUntil(sendPasskeyNotice(env, entry.phone, ticket.l, { kind: "created", usableAt }));
  return { ok: true, usableAt };
}

/** Whether a passkey signs in now (its activation delay over). */
export function isActive(k: PasskeyRow, now = Date.now()): boolean {
  return k.usableAt <= now;
}

/** What a page says of an enrolment that made nothing. */
export function refusalText(lang: Lang, reason: EnrolRefusal): string {
  if (reason === "full") return pt(lang, "errFull", { max: PASSKEY_MAX });
  if (reason === "needs_passkey") return pt(lang, "errNeedsPasskey");
  if (reason === "risk") return pt(lang, "errRisk");
  return pt(lang, reason === "replayed" || reason === "expired" ? "errExpired" : "errCreate");
}
