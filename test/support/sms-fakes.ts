// The SMS providers' fakes as tests use them (test/support/fixtures/sens-fake.js, nhn-fake.js,
// declared in vitest.config.ts): their loopback origins (routed by test/support/setup.ts), the
// credentials they know, the variables that point the service at them, and their control API.
// Every `SmsFakes` has its own SENS service id and NHN app key, so its modes, log and circuits are
// its own even when test files run at the same time.

import { env } from "./env";

export const SENS_ORIGIN = "http://127.0.0.1:9801";
export const NHN_ORIGIN = "http://127.0.0.1:9802";

/** The fake that answers `url`, if any. */
export function fakeFor(url: string): Fetcher | undefined {
  const origin = new URL(url).origin;
  if (origin === SENS_ORIGIN) return env.SENS_FAKE;
  if (origin === NHN_ORIGIN) return env.NHN_FAKE;
  return undefined;
}

export type FakeMode = "ok" | "refuse" | "fail" | "429" | "hang" | "provider-refuse";
export type Provider = "sens" | "nhn";

/** One request a fake received, as its log keeps it. */
export interface FakeRequest {
  at: number;
  accepted: boolean;
  status: number;
  reason?: string;
  mode?: FakeMode;
  from?: string;
  to?: string[];
  content?: string;
  bytes?: number;
}

let next = 0;

export class SmsFakes {
  readonly serviceId: string;
  readonly appKey: string;

  constructor() {
    const n = `${Date.now().toString(36)}${(next++).toString(36)}${Math.random().toString(36).slice(2, 8)}`;
    this.serviceId = `ncp:sms:kr:2606${next}:t${n}`;
    this.appKey = `FakeAppKey${n}`;
  }

  /**
   * Variables pointing the service at the fakes: SENS first, then NHN Cloud, the credentials the
   * fakes know and the sender number registered with them; `vars` overrides.
   */
  vars(vars: Record<string, string> = {}): Record<string, string> {
    return {
      DEV_MODE: "true",
      SMS_SENDER: "naver-sens,nhn-cloud",
      SMS_FROM: "0212345678",
      SMS_TIMEOUT_MS: "1000",
      SENS_BASE_URL: SENS_ORIGIN,
      SENS_SERVICE_ID: this.serviceId,
      SENS_ACCESS_KEY: "FAKEsensAccessKey0001",
      SENS_SECRET_KEY: "fakeSensSecretKey-0123456789abcdefghijKLMN",
      NHN_SMS_BASE_URL: NHN_ORIGIN,
      NHN_SMS_APP_KEY: this.appKey,
      NHN_SMS_SECRET_KEY: "fakeNhnSecretKey01",
      ...vars,
    };
  }

  private target(p: Provider): [Fetcher, string, string] {
    return p === "sens" ? [env.SENS_FAKE, SENS_ORIGIN, this.serviceId] : [env.NHN_FAKE, NHN_ORIGIN, this.appKey];
  }

  /** How the provider answers this account's next `times` requests (all of them without `times`). */
  async mode(p: Provider, mode: FakeMode, times?: number): Promise<void> {
    const [fake, origin, account] = this.target(p);
    const res = await fake.fetch(`${origin}/_fake/mode`, {
      method: "POST",
      body: JSON.stringify({ account, mode, ...(times === undefined ? {} : { times }) }),
    });
    if (!res.ok) throw new Error(`fake ${p}: mode refused (${res.status})`);
  }

  /** Every request the provider received for this account, oldest first. */
  async log(p: Provider): Promise<FakeRequest[]> {
    const [fake, origin, account] = this.target(p);
    return (await fake.fetch(`${origin}/_fake/log?account=${encodeURIComponent(account)}`)).json();
  }

  /** The messages the provider accepted for delivery. */
  async delivered(p: Provider): Promise<FakeRequest[]> {
    return (await this.log(p)).filter((r) => r.accepted);
  }
}
