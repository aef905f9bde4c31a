// The browser's automatic-login device (docs/signin.md "Automatic login"): the cookie that holds
// its device id, who is offered automatic login, and, once a person proves their number on the
// browser, the end of every other subscriber's grants on it.

import { readHostCookie } from "../../core/cookies";
import { isRandomValue } from "../../core/spec";
import type { ProviderEnv } from "../config";
import type { Client } from "../store/clients";
import { deviceOf, endOthersOnDevice } from "../store/directory/index";
import type { Prompt } from "../store/one-time/index";

/** The automatic-login cookie (`__Host-pl_auto`): a device id the service chose at an opt-in. */
export const AUTO_COOKIE = "pl_auto";

/** The device id of the automatic-login cookie, when the request carries a well-formed one. */
export function deviceIdOf(req: Request): string | undefined {
  const v = readHostCookie(req, AUTO_COOKIE);
  return isRandomValue(v) ? v : undefined;
}

/** Automatic login is offered to SKT and KT subscribers of clients that allow it, unless prompt=N. */
export function autoLoginEligible(client: Client, telco: string, prompt: Prompt): boolean {
  return client.autoLogin && (telco === "S" || telco === "K") && prompt !== "N";
}

/**
 * The person has just proven their number on this browser (a right code): every automatic-login
 * grant of another subscriber on the device id it holds ends, for every app, whatever the prompt,
 * the box, the carrier or the client's settings; the person's own grants stay. A shared browser
 * never logs the next person in as the previous one (docs/security.md, invariants).
 */
export async function endOtherSubscribersOnDevice(req: Request, env: ProviderEnv, subscriberId: number): Promise<void> {
  const existing = deviceIdOf(req);
  if (existing) await endOthersOnDevice(env, await deviceOf(env, existing), subscriberId);
}
