// The variables of a text the person sends (docs/signin.md "A text the person sends"), parsed once
// per env: when the code page offers it, the number it goes to, how long a phrase lives, the
// secrets the operator's SMS gateway signs its inbound webhook with, and the token in the path of a
// gateway's own format that signs nothing (ToBeText's: workers/provider/inbound/tobetext.ts).

import { commonConfig, configOf, ConfigError, enumVar, intVar, optionalVar, type CommonVars } from "../../core/config";
import { checkConfig, sharedSecretVar } from "../store/config";

export interface TextVars extends CommonVars {
  SIGNIN_MO?: string;
  SIGNIN_MO_TTL_SECONDS?: string;
  SMS_INBOUND_NUMBER?: string;
  SMS_INBOUND_SECRET?: string;
  SMS_INBOUND_SECRET_NEXT?: string;
  SMS_INBOUND_TOBETEXT_TOKEN?: string;
}

/** Where the text is offered: never, where the SMS-abuse guard would challenge, slow or pause, or always. */
export type TextMode = "off" | "guard" | "all";

export interface TextConfig {
  mode: TextMode;
  /** The service's receiving number (digits), or null: then no text is offered whatever `mode` says. */
  number: string | null;
  /** How long a phrase may be texted back. */
  ttlMs: number;
  /** The inbound webhook's secrets: the current one, then the next while it rotates. */
  secrets: readonly string[];
  /** The token ToBeText's inbound URL carries (`/sms/inbound/tobetext/<token>`), or null: that route is off. */
  tobetextToken: string | null;
}

/** DEV_MODE's embedded receiving number and secret (the dev phone on /dev/outbox signs with it). */
export const DEV_TEXT = { number: "15880000", secret: "dev-inbound-secret-0123456789abcdef" } as const;

function parse(env: TextVars): TextConfig {
  const devMode = commonConfig(env).devMode;
  const mode = enumVar(env, "SIGNIN_MO", ["off", "guard", "all"] as const, "guard");
  const given = optionalVar(env, "SMS_INBOUND_NUMBER") ?? (devMode ? DEV_TEXT.number : undefined);
  const number = given === undefined ? null : given.replace(/-/g, "");
  if (number !== null && !/^\d{8,12}$/.test(number))
    throw new ConfigError("SMS_INBOUND_NUMBER", "must be a phone number of 8 to 12 digits, like 1588-0000");
  const secret = sharedSecretVar(env, "SMS_INBOUND_SECRET", "authorize") ?? (devMode ? DEV_TEXT.secret : undefined);
  const next = sharedSecretVar(env, "SMS_INBOUND_SECRET_NEXT", "authorize");
  const secrets = [secret, next].filter((s): s is string => s !== undefined);
  const tobetextToken = sharedSecretVar(env, "SMS_INBOUND_TOBETEXT_TOKEN", "authorize") ?? null;
  // it is one segment of a URL the operator registers with ToBeText: unreserved characters only
  if (tobetextToken !== null && !/^[A-Za-z0-9._~-]+$/.test(tobetextToken))
    throw new ConfigError("SMS_INBOUND_TOBETEXT_TOKEN", "must be letters, digits, '-', '_', '.' or '~' only");
  return {
    mode,
    // a number with no secret or token to check its texts by cannot receive one
    number: secrets.length > 0 || tobetextToken !== null ? number : null,
    ttlMs: intVar(env, "SIGNIN_MO_TTL_SECONDS", 180, 1, 900) * 1000,
    secrets,
    tobetextToken,
  };
}

export function textConfig(env: TextVars): TextConfig {
  return configOf(env, parse);
}

/** Whether the code page may offer the text at all (a mode other than off, and a number that receives). */
export function textOffered(env: TextVars): boolean {
  const c = textConfig(env);
  return c.mode !== "off" && c.number !== null;
}

checkConfig(textConfig);
