// An app's own test numbers (docs/developers.md "Test numbers"), allocated by the service from a
// range no subscriber holds, never chosen by the developer: registering one reveals nothing about
// real numbers. Each is a review test number of the directory that lists only its app (so it signs
// in to that app only, in both stages, with its fixed code, no SMS, the review numbers' limits and
// lifetime cap of wrong codes, and `directory stats` counts it with them), recorded against the
// app in D1 for the team's page and the testing stage's check. Its `ci` and its code are derived
// from SEAL_KEY and the number, so the page can show them again and neither is stored in clear.

import { derivedToken, sha256 } from "../core/crypto";
import { E } from "../core/errors";
import type { ProviderEnv } from "../provider/config";
import { sealKeyVar } from "../provider/store/clients";
import {
  claimTestNumber,
  releaseTestNumber,
  renewTestNumberRow,
  testNumbersOf,
  type AppTestNumber,
} from "../provider/store/developers";
import {
  subscriberRowAtNumber,
  APP_TEST_RANGE,
  isAppTestNumber,
  type SubscriberInput,
} from "../provider/store/directory/index";
import { removeHolder } from "../provider/store/flows/directory-write";
import { putTestNumber } from "../provider/store/flows/test-numbers";

/** How long a test number lasts, and what a renewal gives it again. */
export const APP_TEST_NUMBER_MS = 90 * 86_400_000;
/** Test numbers an app may hold at once. */
export const APP_TEST_NUMBERS_MAX = 5;

/** A test number as the team sees it: what to type on the sign-in page. */
export interface TestNumberView {
  telcoCd: "S";
  phoneNo: string;
  name: string;
  code: string;
  ci: string;
  expires_at: string;
  created_at: string;
}

const bytesToBase64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));

/** The `ci` of a test number: Base64 of 64 bytes derived from the number (never a person's). */
async function testCi(sealKey: string, phone: string): Promise<string> {
  const seed = await derivedToken(sealKey, "app-test-ci", phone);
  return bytesToBase64(new Uint8Array(await crypto.subtle.digest("SHA-512", new TextEncoder().encode(seed))));
}

/** Its fixed code: six digits derived from the number and its allocation. */
async function testCode(sealKey: string, n: Pick<AppTestNumber, "phone" | "createdAt">): Promise<string> {
  const seed = await derivedToken(sealKey, "app-test-code", `${n.phone}:${n.createdAt}`);
  const h = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(seed)));
  return String(new DataView(h.buffer).getUint32(0) % 1_000_000).padStart(6, "0");
}

/** The name it signs in with: 테스트 and its last four digits. */
const testName = (phone: string) => `테스트${phone.slice(-4)}`;

export async function viewOf(env: ProviderEnv, n: AppTestNumber): Promise<TestNumberView> {
  const key = sealKeyVar(env);
  return {
    telcoCd: "S",
    phoneNo: n.phone,
    name: testName(n.phone),
    code: await testCode(key, n),
    ci: await testCi(key, n.phone),
    expires_at: new Date(n.expiresAt).toISOString(),
    created_at: new Date(n.createdAt).toISOString(),
  };
}

/** Writes the number's review registration in the directory, listing only its app. */
async function register(env: ProviderEnv, n: AppTestNumber): Promise<void> {
  const key = sealKeyVar(env);
  const row: SubscriberInput = {
    telco: "S",
    phone: n.phone,
    name: testName(n.phone),
    gender: "M",
    birth: "1990-01-01",
    foreign: "L",
    ci: await testCi(key, n.phone),
  };
  const test = {
    otpHash: await sha256(await testCode(key, n)),
    clients: JSON.stringify([n.clientId]),
    expiresAt: n.expiresAt,
  };
  await putTestNumber(env, row, test, async (holder) => {
    // the range is refused by every import, so a holder here is another registration at most
    if (holder.test_clients === null) throw E.server("a subscriber holds a number of the test range");
  });
}

/** A random number of the range (010-0100-0000 to 010-0999-9999). */
function drawNumber(): string {
  const r = crypto.getRandomValues(new Uint32Array(1))[0]! % APP_TEST_RANGE.size;
  const phone = String(APP_TEST_RANGE.first + r).padStart(11, "0");
  if (!isAppTestNumber(phone)) throw new Error("test number range");
  return phone;
}

/** Allocates a test number to the app; its view (with its code). */
export async function allocateTestNumber(env: ProviderEnv, clientId: string, by: string): Promise<TestNumberView> {
  if ((await testNumbersOf(env, clientId)).length >= APP_TEST_NUMBERS_MAX)
    throw E.invalidBecause("test_numbers", `an app has at most ${APP_TEST_NUMBERS_MAX} test numbers`);
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = Date.now();
    const n: AppTestNumber = {
      phone: drawNumber(),
      clientId,
      createdBy: by,
      createdAt: now,
      expiresAt: now + APP_TEST_NUMBER_MS,
    };
    if (!(await claimTestNumber(env, n))) continue;
    try {
      await register(env, n);
    } catch (err) {
      await releaseTestNumber(env, clientId, n.phone);
      throw err;
    }
    return viewOf(env, n);
  }
  throw E.server("five test number collisions in a row");
}

/** The app's test number at `phone`, or a 404. */
async function held(env: ProviderEnv, clientId: string, phone: string): Promise<AppTestNumber> {
  const n = (await testNumbersOf(env, clientId)).find((t) => t.phone === phone);
  if (!n) throw E.noSuch("test number");
  return n;
}

/** Renews a test number for another APP_TEST_NUMBER_MS from now (same code). */
export async function renewTestNumber(env: ProviderEnv, clientId: string, phone: string): Promise<TestNumberView> {
  const n = { ...(await held(env, clientId, phone)), expiresAt: Date.now() + APP_TEST_NUMBER_MS };
  await register(env, n);
  if (!(await renewTestNumberRow(env, clientId, phone, n.expiresAt))) throw E.noSuch("test number");
  return viewOf(env, n);
}

/** Removes a test number: its sign-ins end as a removed subscriber's do, and the number is free again. */
export async function removeAppTestNumber(env: ProviderEnv, clientId: string, phone: string): Promise<void> {
  await held(env, clientId, phone);
  const row = await subscriberRowAtNumber(env, phone);
  if (row && row.test_clients !== null) await removeHolder(env, phone, row.id);
  await releaseTestNumber(env, clientId, phone);
}
