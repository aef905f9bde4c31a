// Passkeys (tables `passkey_people`, `passkeys`, `passkey_uses`; docs/passkeys.md): a person's
// WebAuthn credentials, in the person's home shard beside their links and grants. The user handle
// is the service's, one per person, made at their first enrolment with its first characters naming
// this shard (keys.ts `newPasskeyHandle`), so an assertion's user handle reaches this object alone.
//
// Invariants:
// - a passkey belongs to a person at home here and ends with them (people.ts `removeSubscriberRow`: a
//   removal, or the number passing to another person by ci);
// - a person holds at most PASSKEY_MAX passkeys; an insert checks the count in its own step;
// - a passkey signs in only from its `usable_at` on (a passkey made with an SMS proof alone waits
//   the activation delay; one made with an active passkey is usable at once);
// - an assertion's challenge is taken once (`passkey_uses`, kept until it would have expired), in
//   the same step that checks and advances the credential's counter: a replayed assertion, or two
//   submissions of one, sign in once;
// - an enrolment's challenge is taken the same way: one ticket makes at most one passkey;
// - no passkey is made while the person's risk window is open (a SIM change or a port, ../risk.ts),
//   checked in the insert's step; the window's start cancels those not yet usable, in its step.

import { riskFrom, riskUntil } from "../risk";

/** The most passkeys a person holds. */
export const PASSKEY_MAX = 10;

/** A passkey as the shard returns it. */
export interface PasskeyRow {
  credentialId: string;
  subscriberId: number;
  /** The COSE public key. */
  publicKey: Uint8Array;
  counter: number;
  transports: string[];
  name: string;
  /** "platform" (this device's), "hybrid" (a phone across the room), "security-key". */
  device: string;
  createdAt: number;
  usableAt: number;
  lastUsedAt: number | null;
  /** How it was made: "sms" (waits the activation delay) or "passkey". */
  madeWith: "sms" | "passkey";
}

/** What an enrolment writes (the library verified the attestation). */
export interface NewPasskey {
  subscriberId: number;
  credentialId: string;
  publicKey: Uint8Array;
  counter: number;
  transports: string[];
  name: string;
  device: string;
  madeWith: "sms" | "passkey";
  usableAt: number;
  /** The enrolment ticket's challenge hash, taken here once, and until when it is remembered. */
  challenge: string;
  challengeUntil: number;
  /** The passkey the enrolment was proven with ("passkey"): it must be active now. */
  provenWith?: string;
  /** SIGNIN_RISK_WINDOW_SECONDS in ms: no passkey is made while the person's risk window is open (../risk.ts). */
  riskWindowMs: number;
}

export type AddResult =
  | { ok: true }
  | { ok: false; reason: "gone" | "replayed" | "full" | "exists" | "proof_inactive" | "needs_passkey" | "risk" };

export type UseResult =
  | { ok: true; counter: number; subscriberId: number }
  | { ok: false; reason: "unknown" | "replayed" | "pending" | "counter" };

type Row = {
  credential_id: string;
  subscriber_id: number;
  public_key: ArrayBuffer;
  counter: number;
  transports: string;
  name: string;
  device: string;
  created_at: number;
  usable_at: number;
  last_used_at: number | null;
  made_with: "sms" | "passkey";
};

function passkeyOf(r: Row): PasskeyRow {
  return {
    credentialId: r.credential_id,
    subscriberId: r.subscriber_id,
    publicKey: new Uint8Array(r.public_key),
    counter: r.counter,
    transports: JSON.parse(r.transports) as string[],
    name: r.name,
    device: r.device,
    createdAt: r.created_at,
    usableAt: r.usable_at,
    lastUsedAt: r.last_used_at,
    madeWith: r.made_with,
  };
}

/** Taken challenges deleted per use once expired (nothing else removes them). */
const USE_PURGE_BATCH = 50;

export class Passkeys {
  constructor(
    private readonly sql: SqlStorage,
    private readonly storage: DurableObjectStorage,
  ) {}

  /** The person's user handle, made now from `fresh` when they have none; null when no such person is here. */
  handle(subscriberId: number, fresh: string): string | null {
    if (!this.sql.exec("SELECT 1 FROM people WHERE id = ?", subscriberId).toArray().length) return null;
    this.sql.exec(
      "INSERT OR IGNORE INTO passkey_people (subscriber_id, handle, confirmed_at) VALUES (?, ?, ?)",
      subscriberId,
      fresh,
      Date.now(),
    );
    return this.sql
      .exec<{ handle: string }>("SELECT handle FROM passkey_people WHERE subscriber_id = ?", subscriberId)
      .one().handle;
  }

  /** The person's passkeys, newest first. */
  of(subscriberId: number): PasskeyRow[] {
    return this.sql
      .exec<Row>("SELECT * FROM passkeys WHERE subscriber_id = ? ORDER BY created_at DESC", subscriberId)
      .toArray()
      .map(passkeyOf);
  }

  /** A passkey by its credential id, with the person's handle, only while `handle` is that person's. */
  find(credentialId: string, handle: string): { passkey: PasskeyRow; confirmedAt: number } | null {
    const r = this.sql
      .exec<Row & { confirmed_at: number }>(
        `SELECT k.*, p.confirmed_at FROM passkeys k JOIN passkey_people p ON p.subscriber_id = k.subscriber_id
         WHERE k.credential_id = ? AND p.handle = ?`,
        credentialId,
        handle,
      )
      .toArray()[0];
    return r ? { passkey: passkeyOf(r), confirmedAt: r.confirmed_at } : null;
  }

  /** Writes a verified enrolment, in one step with its checks (`AddResult`). */
  add(p: NewPasskey): AddResult {
    let out: AddResult = { ok: false, reason: "gone" };
    const now = Date.now();
    this.storage.transactionSync(() => {
      if (!this.sql.exec("SELECT 1 FROM passkey_people WHERE subscriber_id = ?", p.subscriberId).toArray().length)
        return;
      if (!this.take(p.challenge, p.challengeUntil, now)) return void (out = { ok: false, reason: "replayed" });
      const person = this.sql
        .exec<Parameters<typeof riskFrom>[0]>(
          "SELECT sim_changed_at, sim_change_kind, ported_at, test_otp_hash, test_clients FROM people WHERE id = ?",
          p.subscriberId,
        )
        .toArray()[0];
      if (!person) return;
      if (riskUntil(riskFrom(person), p.riskWindowMs, now) !== null) return void (out = { ok: false, reason: "risk" });
      const mine = this.of(p.subscriberId);
      const active = mine.filter((k) => k.usableAt <= now);
      if (p.provenWith !== undefined) {
        if (!active.some((k) => k.credentialId === p.provenWith))
          return void (out = { ok: false, reason: "proof_inactive" });
      } else if (active.length > 0) return void (out = { ok: false, reason: "needs_passkey" });
      if (mine.length >= PASSKEY_MAX) return void (out = { ok: false, reason: "full" });
      if (this.sql.exec("SELECT 1 FROM passkeys WHERE credential_id = ?", p.credentialId).toArray().length)
        return void (out = { ok: false, reason: "exists" });
      this.sql.exec(
        `INSERT INTO passkeys (credential_id, subscriber_id, public_key, counter, transports, name, device,
           created_at, usable_at, last_used_at, made_with) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)`,
        p.credentialId,
        p.subscriberId,
        p.publicKey,
        p.counter,
        JSON.stringify(p.transports),
        p.name,
        p.device,
        now,
        p.usableAt,
        p.madeWith,
      );
      out = { ok: true };
    });
    return out;
  }

  /**
   * A verified assertion of `credentialId` signs in: its challenge taken once, the passkey usable
   * now, and its counter advanced (an authenticator that counts must count up: a clone does not).
   */
  use(credentialId: string, challenge: string, challengeUntil: number, counter: number): UseResult {
    let out: UseResult = { ok: false, reason: "unknown" };
    const now = Date.now();
    this.storage.transactionSync(() => {
      const r = this.sql.exec<Row>("SELECT * FROM passkeys WHERE credential_id = ?", credentialId).toArray()[0];
      if (!r) return;
      if (!this.take(challenge, challengeUntil, now)) return void (out = { ok: false, reason: "replayed" });
      if (r.usable_at > now) return void (out = { ok: false, reason: "pending" });
      if ((counter !== 0 || r.counter !== 0) && counter <= r.counter)
        return void (out = { ok: false, reason: "counter" });
      this.sql.exec(
        "UPDATE passkeys SET counter = ?, last_used_at = ? WHERE credential_id = ?",
        counter,
        now,
        credentialId,
      );
      out = { ok: true, counter, subscriberId: r.subscriber_id };
    });
    return out;
  }

  /** Takes an enrolment ticket's challenge without making a passkey (an offer declined); false when taken before. */
  takeOnce(challenge: string, until: number): boolean {
    return this.take(challenge, until, Date.now());
  }

  /** The carrier confirmed the person's number now (a passkey sign-in's re-check). */
  confirmed(subscriberId: number, at: number): void {
    this.sql.exec("UPDATE passkey_people SET confirmed_at = ? WHERE subscriber_id = ?", at, subscriberId);
  }

  /** Removes one of the person's passkeys; false when it is not theirs (or gone). */
  remove(subscriberId: number, credentialId: string): boolean {
    return (
      this.sql
        .exec(
          "DELETE FROM passkeys WHERE credential_id = ? AND subscriber_id = ? RETURNING 1",
          credentialId,
          subscriberId,
        )
        .toArray().length > 0
    );
  }

  /** Every passkey of the person ends (the carrier no longer confirms their number); how many. */
  endAll(subscriberId: number): number {
    return this.sql.exec("DELETE FROM passkeys WHERE subscriber_id = ? RETURNING 1", subscriberId).toArray().length;
  }

  /** The person's passkeys not yet usable are cancelled (a SIM change opened the risk window); how many. */
  cancelPending(subscriberId: number, now: number): number {
    return this.sql
      .exec("DELETE FROM passkeys WHERE subscriber_id = ? AND usable_at > ? RETURNING 1", subscriberId, now)
      .toArray().length;
  }

  /** The person is removed (people.ts): their passkeys and handle go in the same step. */
  endOfSubscriber(subscriberId: number): void {
    this.sql.exec("DELETE FROM passkeys WHERE subscriber_id = ?", subscriberId);
    this.sql.exec("DELETE FROM passkey_people WHERE subscriber_id = ?", subscriberId);
  }

  /**
   * A passkey made with an SMS proof, at its usable time: "tell" while it is still there and its
   * person not yet told (`told` marks it after the SMS), "early" before its time, "gone" otherwise.
   */
  usableNotice(credentialId: string): { state: "tell"; subscriberId: number } | { state: "early" | "gone" } {
    const r = this.sql
      .exec<{ subscriber_id: number; usable_at: number; told: number; made_with: string }>(
        "SELECT subscriber_id, usable_at, told, made_with FROM passkeys WHERE credential_id = ?",
        credentialId,
      )
      .toArray()[0];
    if (!r || r.made_with !== "sms" || r.told) return { state: "gone" };
    return r.usable_at > Date.now() ? { state: "early" } : { state: "tell", subscriberId: r.subscriber_id };
  }

  /** The "now usable" SMS went out. */
  told(credentialId: string): void {
    this.sql.exec("UPDATE passkeys SET told = 1 WHERE credential_id = ?", credentialId);
  }

  /** Takes a challenge once: false when it was taken before. Purges a few expired ones. */
  private take(challenge: string, until: number, now: number): boolean {
    const fresh =
      this.sql
        .exec("INSERT OR IGNORE INTO passkey_uses (challenge, until) VALUES (?, ?) RETURNING 1", challenge, until)
        .toArray().length > 0;
    this.sql.exec(
      "DELETE FROM passkey_uses WHERE challenge IN (SELECT challenge FROM passkey_uses WHERE until <= ? LIMIT ?)",
      now,
      USE_PURGE_BATCH,
    );
    return fresh;
  }
}
