// The sign-in state machine, storage side (docs/signin.md "State machine", docs/security.md).
// A sign-in lives in one one-time-store object; from the identify step on, that is the object of
// the phone number's counters. Every step is one synchronous call here, so the transaction, the
// number it is for, the code's hash and attempts, and the number's counters change together or
// not at all, and a request that loses a race changes nothing and learns the state that won.
//
// Invariants (tested in test/provider/signin/code/race.test.ts and test/provider/store/one-time/signin-store.test.ts):
// - a record at "verify" or "consent" names one number forever; its code's hash binds the
//   transaction id and that number, so a code proves only the number it was sent to;
// - each transition checks the step it starts from; two submissions of one step: one winner;
// - an ended, cancelled or superseded sign-in never comes back: an ended record leaves a marker
//   until it would have expired, and `open` writes only where nothing ever was, so a stale
//   identify submission (one that read the sign-in before it moved on) opens nothing;
// - a number's lock is decided in the same call that checks a code: once the limit of failures
//   is reached nothing more is checked and nothing is accepted;
// - a review test number's wrong codes lock the network they came from, never the number (anyone
//   could keep its reviewers out), and count towards its cap over the registration (keyed by its
//   code, so a registration with a new code starts again); at the cap it is suspended: nothing is
//   opened, checked or accepted for it, right code or wrong;
// - a resend of a review test number's fixed code keeps the tries the code has used (five per
//   sign-in: a reviewer who used them all starts again).

import type { Telco } from "../../../core/spec";
import { SIGNIN_COUNTERS as K, testFailuresKey } from "./keys";

export type Step = "identify" | "verify" | "consent" | "moved";
/** The language of a sign-in's pages (the authorize pages' catalogue has these). */
export type Lang = "ko" | "en";
export type Prompt = "login" | "select_account" | "none" | "N" | undefined;

/** A sign-in transaction as stored (hashes only: no code, number or id in clear). */
export interface SigninRecord {
  /** Bumped by every change: the compare-and-set version of `supersede`. */
  v: number;
  clientId: string;
  redirectUri: string;
  state: string;
  prompt: Prompt;
  isHybrid: boolean;
  lang: Lang;
  /** Whether the authorize URL fixed the language (kept in a "start again" link). */
  langGiven: boolean;
  codeChallenge: string | null;
  csrfHash: string;
  browserHash: string;
  createdAt: number;
  expiresAt: number;
  step: Step;
  /**
   * A first-party sign-in: the mark its page chose, the page's path without its slash (the person
   * proves the number for their own /account page, docs/account.md, or for a console, which names
   * itself). None: an app's.
   */
  purpose?: string;
  /** step "moved": the id of the record that continues this sign-in, masked with this one's id. */
  movedTo?: string;
  /** Set by the identify step; never changes afterwards. */
  subscriber?: {
    id: number;
    telco: Telco;
    /** SHA-256 of the number: the key of its counters and of the object holding the sign-in. */
    phoneKey: string;
    /** `010-****-5678`, shown on the verify page. */
    masked: string;
    /** Test numbers: SHA-256 of the fixed code (nothing is sent); null for real numbers. */
    testOtpHash: string | null;
    /**
     * A test number registered for app review: its wrong codes lock networks, never the number
     * (reviewers share it), and count towards `testNumberMaxFailures` over its registration.
     */
    review?: true;
  };
  /**
   * The one-time code: its hash (bound to this transaction, whose id derives from the number),
   * tries, expiry. `txBound`: hashed from the id and the code alone (authorize/transaction.ts
   * `challengeHash`), so a step can present it without reading the record first; records from
   * before that also hashed the number in.
   */
  challenge?: { hash: string; attempts: number; expiresAt: number; txBound?: true } | null;
  autoLoginEligible?: boolean;
  autoLoginOptIn?: boolean;
  /**
   * The code page shows the automatic-login box though the sign-in is not eligible: the number is
   * in its risk window, which the page does not tell whoever typed the number (the box is ignored).
   */
  autoLoginShown?: true;
  /**
   * Set by the identify step when the directory, reading the number, found the person without a
   * link to the client covering what it asks: the code step shows the consent page with no read of
   * the link. It only ever leads to the consent page (a link made meanwhile asks again).
   */
  consentDue?: true;
  /**
   * The SMS-abuse guard's mark (signin/guard.ts `GuardMark`): the scopes the sign-in's sends count
   * in, whether its code followed a passed challenge, and when it was sent. Opaque to the store.
   */
  guard?: { scopes: string[]; challenged: boolean; sentAt: number };
  /**
   * A sign-in proven by a passkey (docs/passkeys.md): the credential id that proved the number, in
   * place of a code. Its end is counted and audited as a passkey sign-in, and offers no passkey.
   */
  passkey?: string;
  /** An OpenID Connect request (docs/oidc.md): its nonce for the id_token. */
  oidc?: { nonce?: string };
  /** When the number was proven (the right code, or the passkey): the id_token's `auth_time`. */
  provenAt?: number;
  /** The passkey that proved it is synced (backed up): the id_token's `amr` says `swk`, else `hwk`. */
  passkeySynced?: true;
  /** Proven by a text the person sent from the number (docs/signin.md "A text the person sends"). */
  texted?: true;
  /**
   * The number is in its risk window until then (epoch ms; a SIM change or a port,
   * store/directory/risk.ts): no automatic login, no passkey offer; said once the number is proven.
   */
  riskUntil?: number;
  /**
   * In the risk window, the person has a passkey that signs in: a right code proves the number but
   * signs nothing in, and takes the sign-in back to step 1 to use the passkey (result "passkey").
   */
  passkeyRequired?: true;
}

/** The number's limits, as configured (docs/signin.md "Limits"). */
export interface NumberLimits {
  otpMaxAttempts: number;
  /** Consecutive failures from one network that lock that network out of the number. */
  lockAfterFailures: number;
  /** Consecutive failures from all networks that lock the number (NIST SP 800-63B-4: ≤ 100). */
  numberLockAfterFailures: number;
  /** Wrong codes from all networks over a review test number's registration before it is suspended. */
  testNumberMaxFailures: number;
  lockMs: number;
  failureMemoryMs: number;
  resendCooldownMs: number;
  sendsPerWindow: number;
  sendWindowMs: number;
}

/** A refusal by a limit: which one, and when it lifts (epoch ms). */
export interface Refusal {
  limit: "ip" | "locked" | "cooldown" | "sends";
  until: number;
}

/** Fixed-window counters of the object (OneTimeStore's `counters` table). */
export interface Counters {
  hit(key: string, windowMs: number, by?: number): { count: number; windowEnd: number };
  /** The live counts of `keys`, in their order (one read for all). */
  peek(...keys: string[]): { count: number; windowEnd: number }[];
  /** Removes counters (one write for all). */
  clear(...keys: string[]): void;
}

type Count = { count: number; windowEnd: number };

/** Where records are kept (OneTimeStore's `entries` table). */
export interface Entries {
  get(key: string): string | null;
  put(key: string, value: string, ttlMs: number): void;
  delete(key: string): void;
}

/** How long a record outlives its transaction, to show "expired" with a start-again link. */
export const RETAIN_MS = 3600_000;

/** What stays of an ended sign-in (completed, cancelled, sent back to the app). */
const ENDED = "ended";

const utf8 = new TextEncoder();

/** Equal hashes, compared in constant time (both are fixed-length base64url digests). */
export function sameHash(a: string, b: string): boolean {
  const x = utf8.encode(a);
  const y = utf8.encode(b);
  return x.byteLength === y.byteLength && crypto.subtle.timingSafeEqual(x, y);
}

/** Whether the gate's CSRF token and browser binding are the record's, both compared. */
function gateHolds(r: SigninRecord, g: StepGate): boolean {
  const csrf = sameHash(g.csrfHash, r.csrfHash);
  const browser = sameHash(g.browserHash, r.browserHash);
  return csrf && browser;
}

/** A record a gated step may act on: an app's sign-in at `step`, live, and the gate its own. */
function gatedAt(r: SigninRecord | null, step: Step, g: StepGate): r is SigninRecord {
  return r !== null && r.step === step && r.purpose === undefined && r.expiresAt > Date.now() && gateHolds(r, g);
}

function retainMs(r: SigninRecord): number {
  return Math.max(1, r.expiresAt - Date.now()) + RETAIN_MS;
}

/** How long a review test number's wrong codes are remembered: longer than a registration lives (a year). */
export const TEST_FAILURE_MEMORY_MS = 400 * 86_400_000;

export interface OpenRequest {
  key: string;
  /** The new record: step "verify", subscriber and challenge set. */
  record: SigninRecord;
  netKey: string;
  /** A real number: takes a send (cooldown, sends per window). */
  send: boolean;
  limits: NumberLimits;
}

export type OpenResult =
  | { result: "opened" | "exists" }
  /**
   * The record this submission would open was opened before and has since ended, or moved on to
   * another number, or the sign-in expired: the submission is stale and nothing changed.
   */
  | { result: "stale" }
  /** Opened without a code: the number's resend cooldown runs until `until` (another sign-in just sent one). */
  | { result: "waiting"; until: number }
  | { result: "refused"; refusal: Refusal }
  /** A review test number at its cap of wrong codes: nothing opened (answered as an unknown number). */
  | { result: "suspended" };

export interface VerifyRequest {
  key: string;
  phoneKey: string;
  netKey: string;
  presented: string;
  limits: NumberLimits;
  /** Where a right code leads: the consent step, or the end (the record is deleted). */
  next: "consent" | "done";
  autoLoginOptIn: boolean;
}

/**
 * What a step presents in place of a read of its record: SHA-256 of the page's CSRF token and of the
 * browser-binding cookie, checked here against the record's (constant time).
 */
export interface StepGate {
  csrfHash: string;
  browserHash: string;
}

/** A code entry presented with its gate, the record unread: an app's sign-in (not /account). */
export interface GatedVerifyRequest {
  key: string;
  gate: StepGate;
  netKey: string;
  presented: string;
  limits: NumberLimits;
  /** The box ticked; it counts only where the record is eligible. */
  autoLoginOptIn: boolean;
}

/** A gated step this call does not settle (nothing changed): the caller reads the record and goes the full way. */
export type Unsettled = { result: "unsettled" };

export type VerifyResult =
  | { result: "ok"; record: SigninRecord }
  | { result: "wrong"; left: number; refusal: Refusal | null; record: SigninRecord }
  | { result: "exhausted" | "expired" | "absent"; record: SigninRecord }
  | { result: "refused"; refusal: Refusal; record: SigninRecord }
  /**
   * A review test number at its cap of wrong codes: nothing checked. `crossed`: this entry's wrong
   * code reached the cap (exactly one entry does).
   */
  | { result: "suspended"; record: SigninRecord; crossed: boolean }
  /** A right code for a sign-in that must use a passkey (`passkeyRequired`): the record back at step 1. */
  | { result: "passkey"; record: SigninRecord }
  | { result: "conflict"; record: SigninRecord | null };

export interface ResendRequest {
  key: string;
  phoneKey: string;
  netKey: string;
  hash: string;
  otpTtlMs: number;
  send: boolean;
  limits: NumberLimits;
}

export type ResendResult =
  | { result: "ok"; record: SigninRecord }
  | { result: "refused"; refusal: Refusal; record: SigninRecord }
  | { result: "suspended"; record: SigninRecord }
  | { result: "conflict"; record: SigninRecord | null };

/** The sign-in transitions over one object's entries and counters. Each method is synchronous. */
export class SigninMachine {
  constructor(
    private readonly entries: Entries,
    private readonly counters: Counters,
  ) {}

  /** The record, or null when there is none or the sign-in has ended. */
  get(key: string): SigninRecord | null {
    const raw = this.entries.get(key);
    return raw === null || raw === ENDED ? null : (JSON.parse(raw) as SigninRecord);
  }

  private save(key: string, r: SigninRecord): void {
    this.entries.put(key, JSON.stringify(r), retainMs(r));
  }

  /**
   * Ends the sign-in at `key`: only a marker stays (no client, state or number), as long as the
   * record would have, so that `open` can tell "ended" from "never opened" for a late submission.
   */
  private end(key: string, r: SigninRecord): void {
    this.entries.put(key, ENDED, retainMs(r));
  }

  /** A new transaction at its first step. */
  create(key: string, record: SigninRecord): void {
    this.save(key, record);
  }

  /** The lock of a number as seen from one network: the number's own, else the network's. */
  private lockOf(phoneKey: string, netKey: string): Refusal | null {
    return this.lockAndFailures(phoneKey, netKey).locked;
  }

  /**
   * `lockOf`, and whether consecutive failures are counted against the number (its own, or this
   * network's), in one read: a right code clears only counts that are there.
   */
  private lockAndFailures(phoneKey: string, netKey: string): { locked: Refusal | null; failures: boolean } {
    const [lock, netLock, fail, netFail] = this.counters.peek(
      K.lock(phoneKey),
      K.netLock(phoneKey, netKey),
      K.fail(phoneKey),
      K.netFail(phoneKey, netKey),
    ) as [Count, Count, Count, Count];
    const l = lock.count > 0 ? lock : netLock.count > 0 ? netLock : null;
    return { locked: l && { limit: "locked", until: l.windowEnd }, failures: fail.count > 0 || netFail.count > 0 };
  }

  /** Whether `r` is a review test number at its cap of wrong codes. */
  private suspended(r: SigninRecord, limits: NumberLimits): boolean {
    const s = r.subscriber;
    if (!s?.review || s.testOtpHash === null) return false;
    return this.counters.peek(testFailuresKey(s.phoneKey, s.testOtpHash))[0]!.count >= limits.testNumberMaxFailures;
  }

  /** Refuses inside the cooldown or past the sends of the window; takes a send otherwise. */
  private takeSend(phoneKey: string, limits: NumberLimits): Refusal | null {
    const [cool, sends] = this.counters.peek(K.cool(phoneKey), K.sends(phoneKey)) as [Count, Count];
    if (limits.resendCooldownMs > 0 && cool.count > 0) return { limit: "cooldown", until: cool.windowEnd };
    if (sends.count >= limits.sendsPerWindow) return { limit: "sends", until: sends.windowEnd };
    if (limits.resendCooldownMs > 0) this.counters.hit(K.cool(phoneKey), limits.resendCooldownMs);
    this.counters.hit(K.sends(phoneKey), limits.sendWindowMs);
    return null;
  }

  /**
   * The identify step's half in the number's object: the continuing record, opened unless the
   * number is locked for this network or a send is refused. Its key derives from the previous
   * record's id and the number, so a repeated submission finds it ("exists") and sends nothing.
   * Only a key where nothing is stored is written: a record there that ended or moved on to another
   * number means the sign-in went on without this submission, which read it before; reopening it
   * would bring back a sign-in that ended, with a new code ("stale": nothing changes).
   */
  open(o: OpenRequest): OpenResult {
    const phoneKey = o.record.subscriber!.phoneKey;
    const raw = this.entries.get(o.key);
    if (raw !== null) {
      const have = raw === ENDED ? null : (JSON.parse(raw) as SigninRecord);
      const live = have !== null && have.step !== "moved" && have.subscriber?.phoneKey === phoneKey;
      return { result: live ? "exists" : "stale" };
    }
    if (o.record.expiresAt <= Date.now()) return { result: "stale" };
    if (this.suspended(o.record, o.limits)) return { result: "suspended" };
    const locked = this.lockOf(phoneKey, o.netKey);
    if (locked) return { result: "refused", refusal: locked };
    if (o.send) {
      const refused = this.takeSend(phoneKey, o.limits);
      if (refused?.limit === "cooldown") {
        this.save(o.key, { ...o.record, challenge: null });
        return { result: "waiting", until: refused.until };
      }
      if (refused) return { result: "refused", refusal: refused };
    }
    this.save(o.key, o.record);
    return { result: "opened" };
  }

  /**
   * Undoes `open` for a request that lost the race to move the previous record: nothing stays (no
   * ended marker either: the previous record did not move, and a retry from its page, once it is
   * shown again, derives this same key and must be able to open it).
   */
  abandon(key: string, phoneKey: string, refundSend: boolean, limits: NumberLimits): void {
    const have = this.get(key);
    if (!have || have.subscriber?.phoneKey !== phoneKey) return;
    this.entries.delete(key);
    if (refundSend) this.refundSend(phoneKey, limits);
  }

  /** A code that could not be sent: withdrawn, and its send given back so a resend works at once. */
  unsend(key: string, phoneKey: string, limits: NumberLimits): SigninRecord | null {
    const r = this.get(key);
    if (!r || r.step !== "verify" || r.subscriber?.phoneKey !== phoneKey) return r;
    const next: SigninRecord = { ...r, v: r.v + 1, challenge: null };
    this.save(key, next);
    this.refundSend(phoneKey, limits);
    return next;
  }

  private refundSend(phoneKey: string, limits: NumberLimits): void {
    if (this.counters.peek(K.sends(phoneKey))[0]!.count > 0)
      this.counters.hit(K.sends(phoneKey), limits.sendWindowMs, -1);
    this.counters.clear(K.cool(phoneKey));
  }

  /**
   * The identify step's half in the previous record's object: marks it moved to the record that
   * continues the sign-in, if nobody changed it since version `v`. Returns the record as it is now.
   */
  supersede(key: string, v: number, movedTo: string): { moved: boolean; record: SigninRecord | null } {
    const r = this.get(key);
    if (!r || r.v !== v || r.step === "moved" || r.expiresAt <= Date.now()) return { moved: false, record: r };
    const next: SigninRecord = { ...r, v: r.v + 1, step: "moved", movedTo, challenge: null };
    this.save(key, next);
    return { moved: true, record: next };
  }

  /**
   * One code entry. Refused unlocked-first: a locked number (or network) checks nothing. A wrong
   * code counts against the code's tries, the network's and the number's consecutive failures,
   * and locks when a limit is reached; a right one is used once and moves the sign-in on.
   */
  verify(o: VerifyRequest): VerifyResult {
    const r = this.get(o.key);
    if (!r || r.step !== "verify" || r.subscriber?.phoneKey !== o.phoneKey || r.expiresAt <= Date.now()) {
      return { result: "conflict", record: r };
    }
    return this.enter(r, o);
  }

  /**
   * `verify` with no read before it: the gate checked here, the number and the box's eligibility
   * taken from the record, and a right code always leads to the consent step (the caller then
   * learns whether the person consented already). Unsettled, changing nothing, for anything but a
   * live app sign-in at the code step whose gate holds and whose code hash is `txBound`.
   */
  verifyGated(o: GatedVerifyRequest): VerifyResult | Unsettled {
    const r = this.get(o.key);
    // A review test number goes the full way: its registration is read again before its code.
    if (!gatedAt(r, "verify", o.gate) || !r.challenge?.txBound || r.subscriber?.review) return { result: "unsettled" };
    return this.enter(r, {
      key: o.key,
      phoneKey: r.subscriber!.phoneKey,
      netKey: o.netKey,
      presented: o.presented,
      limits: o.limits,
      next: "consent",
      autoLoginOptIn: r.autoLoginEligible === true && o.autoLoginOptIn,
    });
  }

  /** A code entry on a record at the code step for the request's number. */
  private enter(r: SigninRecord, o: VerifyRequest): VerifyResult {
    const now = Date.now();
    if (this.suspended(r, o.limits)) return { result: "suspended", record: r, crossed: false };
    const { locked, failures } = this.lockAndFailures(o.phoneKey, o.netKey);
    if (locked) return { result: "refused", refusal: locked, record: r };
    const c = r.challenge;
    if (!c) return { result: "absent", record: r };
    if (c.expiresAt <= now) return { result: "expired", record: r };
    if (c.attempts >= o.limits.otpMaxAttempts) return { result: "exhausted", record: r };
    // the code is six digits and its hash unkeyed: the stored hash is compared in constant time
    if (!sameHash(c.hash, o.presented)) {
      const next: SigninRecord = { ...r, v: r.v + 1, challenge: { ...c, attempts: c.attempts + 1 } };
      this.save(o.key, next);
      const s = r.subscriber!;
      const refusal = this.countFailure(o, !s.review);
      if (s.review && s.testOtpHash !== null) {
        const t = this.counters.hit(testFailuresKey(s.phoneKey, s.testOtpHash), TEST_FAILURE_MEMORY_MS);
        const max = o.limits.testNumberMaxFailures;
        if (t.count >= max) return { result: "suspended", record: next, crossed: t.count === max };
      }
      return { result: "wrong", left: o.limits.otpMaxAttempts - c.attempts - 1, refusal, record: next };
    }
    if (failures) this.counters.clear(K.netFail(o.phoneKey, o.netKey), K.fail(o.phoneKey));
    if (r.passkeyRequired) {
      const back: SigninRecord = { ...r, v: r.v + 1, step: "identify", challenge: null, autoLoginOptIn: false };
      this.save(o.key, back);
      return { result: "passkey", record: back };
    }
    if (o.next === "done") {
      this.end(o.key, r);
      return { result: "ok", record: { ...r, challenge: null, provenAt: now } };
    }
    const next: SigninRecord = {
      ...r,
      v: r.v + 1,
      step: "consent",
      challenge: null,
      autoLoginOptIn: o.autoLoginOptIn,
      provenAt: now,
    };
    this.save(o.key, next);
    return { result: "ok", record: next };
  }

  /** Counts a wrong code against the network's consecutive failures, and the number's unless `numberWide` is false. */
  private countFailure(o: VerifyRequest, numberWide: boolean): Refusal | null {
    const { limits } = o;
    const net = this.counters.hit(K.netFail(o.phoneKey, o.netKey), limits.failureMemoryMs);
    const all = numberWide ? this.counters.hit(K.fail(o.phoneKey), limits.failureMemoryMs) : { count: 0 };
    let refusal: Refusal | null = null;
    if (numberWide && all.count >= limits.numberLockAfterFailures) {
      const l = this.counters.hit(K.lock(o.phoneKey), limits.lockMs);
      this.counters.clear(K.fail(o.phoneKey));
      refusal = { limit: "locked", until: l.windowEnd };
    }
    if (net.count >= limits.lockAfterFailures) {
      const l = this.counters.hit(K.netLock(o.phoneKey, o.netKey), limits.lockMs);
      this.counters.clear(K.netFail(o.phoneKey, o.netKey));
      refusal ??= { limit: "locked", until: l.windowEnd };
    }
    return refusal;
  }

  /**
   * A new code for the same number: lock and send limits apply; a new code's tries start again, and
   * a review test number's same fixed code keeps the tries it has used, with a new expiry.
   */
  resend(o: ResendRequest): ResendResult {
    const r = this.get(o.key);
    const now = Date.now();
    if (!r || r.step !== "verify" || r.subscriber?.phoneKey !== o.phoneKey || r.expiresAt <= now) {
      return { result: "conflict", record: r };
    }
    if (this.suspended(r, o.limits)) return { result: "suspended", record: r };
    const refusal = this.lockOf(o.phoneKey, o.netKey) ?? (o.send ? this.takeSend(o.phoneKey, o.limits) : null);
    if (refusal) return { result: "refused", refusal, record: r };
    const attempts =
      r.subscriber?.review && r.challenge && sameHash(r.challenge.hash, o.hash) ? r.challenge.attempts : 0;
    const next: SigninRecord = {
      ...r,
      v: r.v + 1,
      challenge: { hash: o.hash, attempts, expiresAt: now + o.otpTtlMs, txBound: true },
    };
    this.save(o.key, next);
    return { result: "ok", record: next };
  }

  /**
   * Ends the sign-in from one of `from` (consent agreed, cancelled): the record is replaced by the
   * ended marker and returned; null with the current record when it is elsewhere or gone.
   */
  finish(key: string, from: readonly Step[]): { ended: boolean; record: SigninRecord | null } {
    const r = this.get(key);
    if (!r || !from.includes(r.step) || r.expiresAt <= Date.now()) return { ended: false, record: r };
    this.end(key, r);
    return { ended: true, record: r };
  }

  /**
   * The consent agreed, with no read before it: ends an app's sign-in of `clientId` at the consent
   * step whose gate holds, as `finish` does; otherwise unsettled, changing nothing and returning
   * nothing (the caller reads the record and goes the full way).
   */
  finishGated(key: string, gate: StepGate, clientId: string): { ended: true; record: SigninRecord } | Unsettled {
    const r = this.get(key);
    if (!gatedAt(r, "consent", gate) || r.clientId !== clientId) return { result: "unsettled" };
    this.end(key, r);
    return { ended: true, record: r };
  }

  /** The page language, whatever the step (it changes nothing a step depends on). */
  setLang(key: string, lang: Lang): SigninRecord | null {
    const r = this.get(key);
    if (!r || r.step === "moved") return r;
    const next: SigninRecord = { ...r, lang };
    this.save(key, next);
    return next;
  }
}
