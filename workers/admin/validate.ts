// Validation of client fields sent to the admin API. Reasons are fixed phrases: an operator learns
// which field and which rule, and the input itself is never echoed back.

import { E } from "../core/errors";
import {
  DEFAULT_EVENT_TYPES,
  EVENT_TYPES,
  isEventType,
  type ClientPatch,
  type EventType,
} from "../provider/store/clients";
import { SMS_BUDGET_MAX, SMS_BUDGET_MIN } from "../provider/store/config";
import { eventsUriProblem } from "../provider/store/hosts";
import { IDENTITY_ITEMS, isIdentityItem, LOOPBACK_HOSTS, type IdentityItem } from "../core/spec";

export const MAX_REDIRECT_URIS = 20;
const MAX_URI_LENGTH = 2048;
const MAX_NAME_LENGTH = 100;
/** Schemes that are never an app's callback (script, local files, other protocols). */
const REFUSED_SCHEMES = new Set([
  "javascript",
  "data",
  "file",
  "blob",
  "vbscript",
  "about",
  "filesystem",
  "ftp",
  "ws",
  "wss",
  "mailto",
  "tel",
  "sms",
]);

/**
 * Why a redirect URI cannot be registered, or null when it can (RFC 6749 §3.1.2, RFC 8252 §7):
 * absolute, no fragment, `https`, or `http` on a loopback host, or a custom app scheme.
 */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length === 0 || uri.length > MAX_URI_LENGTH) return `must be 1 to ${MAX_URI_LENGTH} characters`;
  if (/[\s\x00-\x1f\x7f]/.test(uri)) return "must not contain spaces or control characters";
  if (uri.includes("#")) return "must not contain a fragment (#)";
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri);
  let url: URL;
  try {
    if (!m) throw new TypeError();
    url = new URL(uri);
  } catch {
    return "must be an absolute URI";
  }
  const scheme = m[1]!.toLowerCase();
  if (scheme === "https" || scheme === "http") {
    if (url.hostname === "") return "must name a host";
    if (url.username !== "" || url.password !== "") return "must not contain credentials";
    if (scheme === "http" && !LOOPBACK_HOSTS.has(url.hostname)) {
      return "http is allowed only for loopback (localhost, 127.0.0.1, [::1]); use https";
    }
    return null;
  }
  if (REFUSED_SCHEMES.has(scheme)) return "this scheme cannot be a callback; use https or an app scheme";
  return null;
}

function redirectUris(v: unknown): string[] {
  if (!Array.isArray(v) || v.length === 0) throw E.invalidBecause("redirect_uris", "must be a non-empty array of URIs");
  if (v.length > MAX_REDIRECT_URIS)
    throw E.invalidBecause("redirect_uris", `at most ${MAX_REDIRECT_URIS} may be registered`);
  const out: string[] = [];
  v.forEach((u, i) => {
    if (typeof u !== "string") throw E.invalidBecause(`redirect_uris[${i}]`, "must be a string");
    const problem = redirectUriProblem(u);
    if (problem) throw E.invalidBecause(`redirect_uris[${i}]`, problem);
    if (!out.includes(u)) out.push(u);
  });
  return out;
}

function items(v: unknown): IdentityItem[] {
  if (!Array.isArray(v)) throw E.invalidBecause("items", `must be an array of ${IDENTITY_ITEMS.join(", ")}`);
  v.forEach((x, i) => {
    if (typeof x !== "string" || !isIdentityItem(x)) {
      throw E.invalidBecause(`items[${i}]`, `unknown item; expected one of ${IDENTITY_ITEMS.join(", ")}`);
    }
  });
  // Canonical order and no repeats: the user record lists items in spec §2.1 order.
  return IDENTITY_ITEMS.filter((i) => v.includes(i));
}

function name(v: unknown): string {
  if (typeof v !== "string") throw E.invalidBecause("name", "must be a string");
  const t = v.trim();
  if (t.length === 0 || t.length > MAX_NAME_LENGTH)
    throw E.invalidBecause("name", `must be 1 to ${MAX_NAME_LENGTH} characters`);
  if (/[\x00-\x1f\x7f]/.test(t)) throw E.invalidBecause("name", "must not contain control characters");
  return t.normalize("NFC");
}

function flag(field: string, v: unknown): boolean {
  if (typeof v !== "boolean") throw E.invalidBecause(field, "must be true or false");
  return v;
}

/**
 * Where signed events go (docs/events.md "Registering"): https to a public host (workers/provider/store/hosts.ts),
 * or a loopback host in DEV_MODE; null for none.
 */
function eventsUri(v: unknown, devMode: boolean): string | null {
  if (v === null) return null;
  if (typeof v !== "string" || v.length > MAX_URI_LENGTH) throw E.invalidBecause("events_uri", "must be a URI or null");
  const problem = eventsUriProblem(v, devMode);
  if (problem) throw E.invalidBecause("events_uri", problem);
  return v;
}

/** The event types an app takes (docs/events.md): known types, in their listed order, no repeats. */
function eventTypes(v: unknown): EventType[] {
  if (!Array.isArray(v)) throw E.invalidBecause("event_types", `must be an array of ${EVENT_TYPES.join(", ")}`);
  v.forEach((x, i) => {
    if (typeof x !== "string" || !isEventType(x)) {
      throw E.invalidBecause(`event_types[${i}]`, `unknown event type; expected one of ${EVENT_TYPES.join(", ")}`);
    }
  });
  return EVENT_TYPES.filter((t) => v.includes(t));
}

/** A consent text (purpose of use, retention): 1-300 characters of one line, or null for the default. */
function consentText(field: "purpose" | "retention", v: unknown): string | null {
  if (v === null) return null;
  if (typeof v !== "string") throw E.invalidBecause(field, "must be text or null");
  const s = v.normalize("NFC").trim();
  if (s.length < 1 || s.length > 300) throw E.invalidBecause(field, "must be 1 to 300 characters");
  if (/[\x00-\x1f\x7f]/.test(s)) throw E.invalidBecause(field, "must not contain control characters");
  return s;
}

/**
 * An app's daily SMS budget in messages (docs/operations.md "SMS budgets"), a whole number within
 * the bounds SMS_APP_DAILY_BUDGET has; null for that default.
 */
function smsDailyBudget(v: unknown): number | null {
  if (v === null) return null;
  if (typeof v !== "number" || !Number.isInteger(v) || v < SMS_BUDGET_MIN || v > SMS_BUDGET_MAX) {
    throw E.invalidBecause(
      "sms_daily_budget",
      `must be a whole number of messages from ${SMS_BUDGET_MIN} to ${SMS_BUDGET_MAX}, or null for the default (SMS_APP_DAILY_BUDGET)`,
    );
  }
  return v;
}

export const CLIENT_FIELDS = [
  "name",
  "redirect_uris",
  "items",
  "auto_login",
  "oidc",
  "events_uri",
  "event_types",
  "purpose",
  "retention",
  "sms_daily_budget",
] as const;

/** A client's fields as a caller gives them (a JSON body, an app form), unchecked: the readers below check them. */
export type ClientFields = Partial<Record<(typeof CLIENT_FIELDS)[number], unknown>>;

/**
 * The fields of a create request: name and redirect_uris required; items default to none, event
 * types to plid-deleted, the SMS budget to SMS_APP_DAILY_BUDGET's (null).
 */
export function newClientFields(
  body: Record<string, unknown>,
  devMode: boolean,
): Required<
  Pick<
    ClientPatch,
    | "name"
    | "redirectUris"
    | "items"
    | "autoLogin"
    | "oidc"
    | "eventsUri"
    | "eventTypes"
    | "purpose"
    | "retention"
    | "smsDailyBudget"
  >
> {
  if (body.name === undefined) throw E.missing("name");
  if (body.redirect_uris === undefined) throw E.missing("redirect_uris");
  return {
    name: name(body.name),
    redirectUris: redirectUris(body.redirect_uris),
    items: body.items === undefined ? [] : items(body.items),
    autoLogin: body.auto_login === undefined ? false : flag("auto_login", body.auto_login),
    oidc: body.oidc === undefined ? false : flag("oidc", body.oidc),
    eventsUri: body.events_uri === undefined ? null : eventsUri(body.events_uri, devMode),
    eventTypes: body.event_types === undefined ? [...DEFAULT_EVENT_TYPES] : eventTypes(body.event_types),
    purpose: body.purpose === undefined ? null : consentText("purpose", body.purpose),
    retention: body.retention === undefined ? null : consentText("retention", body.retention),
    smsDailyBudget: body.sms_daily_budget === undefined ? null : smsDailyBudget(body.sms_daily_budget),
  };
}

/** The fields of an update request: any subset, at least one. */
export function clientPatch(body: Record<string, unknown>, devMode: boolean): ClientPatch {
  const p: ClientPatch = {};
  if (body.name !== undefined) p.name = name(body.name);
  if (body.redirect_uris !== undefined) p.redirectUris = redirectUris(body.redirect_uris);
  if (body.items !== undefined) p.items = items(body.items);
  if (body.auto_login !== undefined) p.autoLogin = flag("auto_login", body.auto_login);
  if (body.oidc !== undefined) p.oidc = flag("oidc", body.oidc);
  if (body.events_uri !== undefined) p.eventsUri = eventsUri(body.events_uri, devMode);
  if (body.event_types !== undefined) p.eventTypes = eventTypes(body.event_types);
  if (body.purpose !== undefined) p.purpose = consentText("purpose", body.purpose);
  if (body.retention !== undefined) p.retention = consentText("retention", body.retention);
  if (body.sms_daily_budget !== undefined) p.smsDailyBudget = smsDailyBudget(body.sms_daily_budget);
  if (Object.keys(p).length === 0) throw E.missing(CLIENT_FIELDS.join(" or "));
  return p;
}
