// The kit's login store in KV alone (LoginStore, storage.ts; docs/rp-kit.md "Storage"): a login's
// state, the claims of its one code exchange (redeem.ts), a plid's session index and its end, the
// events' jtis, each under a key of kv.ts. `loginStoreFor` picks the kit's Durable Object store
// (login-store.ts) where it is bound, and this one otherwise.
//
// KV is eventually consistent and has no compare-and-set. That is acceptable here because a state
// is also bound to a browser cookie and the service's code is single use (docs/architecture.md §6):
// what KV gives up against the Durable Object store is in the package README ("Pages Functions").

import { configOf } from "./core/config.js";
import { sha256 } from "./core/crypto.js";
import { deleteKey, forgetIdentity, KEY, putSession } from "./kv.js";
import { DurableLoginStore, type PhoneLoginStore } from "./login-store.js";
import { getRedemption, redeemOnce } from "./redeem.js";
import {
  bindingMatches,
  ENDED_TTL_SECONDS,
  MAX_ENDED_SESSIONS,
  type CallbackLogin,
  type LoginStore,
  type PendingLogin,
  type RedeemOutcome,
  type Redeemed,
  type SessionRecord,
  type StateRefusal,
} from "./storage.js";

/** The bindings a login store is chosen from. */
export type StoreEnv = { RP_KV: KVNamespace; RP_STORE?: DurableObjectNamespace<PhoneLoginStore> | undefined };

/** When a plid was last ended here (a disconnect, an event). Only `endPlid` writes it. */
interface PlidEnd {
  at: number;
}

/** The key of a state's redemption; a native app's is the hash of `token:<code>`. */
const redemptionKey = (stateHash: string) => `callback:${stateHash}`;

const FAILED: RedeemOutcome = { kind: "failed", failure: "upstream" };

export class KvLoginStore implements LoginStore {
  constructor(private readonly kv: KVNamespace) {}

  async putState(state: string, pending: PendingLogin, ttlSeconds: number): Promise<void> {
    await this.kv.put(KEY.state(await sha256(state)), JSON.stringify(pending), { expirationTtl: ttlSeconds });
  }

  /** Ends a state: its login was redeemed, refused by the service, or cancelled. */
  private endState(stateHash: string): Promise<void> {
    return deleteKey(this.kv, KEY.state(stateHash));
  }

  /**
   * Reading the state changes nothing: a callback that fails the browser check must not spend its
   * owner's state. The state ends when its login is redeemed, which the redemption records for the
   * duplicates (a duplicate arriving after that finds the redemption and the browser's proof).
   */
  async claimCallback(
    stateHash: string,
    bindingCookie: string | undefined,
    stateTtlSeconds: number,
    waitMs: number,
  ): Promise<CallbackLogin | StateRefusal> {
    const key = redemptionKey(stateHash);
    const pending = await this.kv.get<PendingLogin>(KEY.state(stateHash), "json");
    if (pending) {
      if (Date.now() - pending.created > stateTtlSeconds * 1000) return "expired";
      if (!(await bindingMatches(pending, bindingCookie))) return "mismatch";
      const { bindingHash, returnTo } = pending;
      return {
        pending,
        bindingHash,
        returnTo,
        cancel: () => this.endState(stateHash),
        // The state is spent by this attempt whatever its outcome: a second callback must not exchange again.
        redeem: (work) =>
          redeemOnce(this.kv, key, { proofHash: bindingHash, returnTo }, waitMs, async () => {
            await this.endState(stateHash);
            return work();
          }),
      };
    }
    const redeemed = await getRedemption(this.kv, key);
    if (!redeemed?.returnTo || !(await bindingMatches({ bindingHash: redeemed.proofHash }, bindingCookie))) {
      return "unknown";
    }
    const { proofHash: bindingHash, returnTo } = redeemed;
    return {
      pending: null,
      bindingHash,
      returnTo,
      cancel: () => Promise.resolve(),
      // nothing left to exchange with: a duplicate that finds no claim to follow fails
      redeem: () =>
        redeemOnce(this.kv, key, { proofHash: bindingHash, returnTo }, waitMs, () => Promise.resolve(FAILED)),
    };
  }

  redeemCode(
    keyHash: string,
    proofHash: string,
    waitMs: number,
    work: () => Promise<RedeemOutcome>,
  ): Promise<Redeemed> {
    return redeemOnce(this.kv, keyHash, { proofHash }, waitMs, work);
  }

  async createLoginSession(
    record: SessionRecord,
    ttlSeconds: number,
    id: string,
    startedAt: number,
  ): Promise<number | null> {
    const [hash, plidHash] = await Promise.all([sha256(id), sha256(record.plid)]);
    await Promise.all([
      putSession(this.kv, hash, record, ttlSeconds),
      // The session in its plid's index, so that an end of the plid ends it (docs/rp-kit.md "Events").
      // A key of its own: no login reads and writes back a list another one is writing. A failed
      // write leaves the session out; the identity's removal, which every session checks, still ends it.
      this.kv.put(KEY.plidSession(plidHash, hash), "", { expirationTtl: ttlSeconds }).catch(() => {}),
    ]);
    const end = await this.kv.get<PlidEnd>(KEY.plidEnded(plidHash), "json");
    return end !== null && end.at >= startedAt ? end.at : null;
  }

  /**
   * The end is recorded first, under a key no login writes (so none writes back an older value over
   * it, and KV's one write per key per second never refuses it because a login just wrote there): a
   * login of the plid under way meanwhile reads it after storing its identity, session and index
   * entry (`createLoginSession`), and if it read before the end was recorded, its writes came before
   * it and these deletions come after them. The index entries stay until they expire, so a retry of
   * an end that failed midway finds the sessions again.
   */
  async endPlid(plid: string): Promise<number> {
    const plidHash = await sha256(plid);
    const key = KEY.plidEnded(plidHash);
    await this.kv
      .put(key, JSON.stringify({ at: Date.now() } satisfies PlidEnd), { expirationTtl: ENDED_TTL_SECONDS })
      .catch(async (err: unknown) => {
        // refused within a second of another end of the plid (a disconnect and its event): that one
        // holds, and a login that began after it cannot have read the ended plid at the service
        if ((await this.kv.get(key)) === null) throw err;
      });
    const prefix = KEY.plidSession(plidHash, "");
    const { keys } = await this.kv.list({ prefix, limit: MAX_ENDED_SESSIONS });
    const sessions = keys.map((k) => k.name.slice(prefix.length));
    await Promise.all([...sessions.map((h) => deleteKey(this.kv, KEY.session(h))), forgetIdentity(this.kv, plid)]);
    return sessions.length;
  }

  /**
   * A read: KV has no compare-and-set, so copies racing within KV's propagation may all pass (ending
   * a plid twice is harmless), and the jti is recorded only by `jtiActedOn`.
   */
  async claimJti(jti: string): Promise<boolean> {
    return (await this.kv.get(KEY.eventJti(await sha256(jti)))) === null;
  }

  async jtiActedOn(jti: string, ttlSeconds: number): Promise<void> {
    await this.kv.put(KEY.eventJti(await sha256(jti)), "1", { expirationTtl: ttlSeconds });
  }

  /** Nothing was recorded: the service's retry finds no jti. */
  async releaseJti(): Promise<void> {}
}

function chooseStore(env: StoreEnv): LoginStore {
  return env.RP_STORE ? new DurableLoginStore(env.RP_STORE, env.RP_KV) : new KvLoginStore(env.RP_KV);
}

/** The env's login store, chosen once per env: the kit's Durable Object store when RP_STORE is bound, else KV. */
export function loginStoreFor(env: StoreEnv): LoginStore {
  return configOf(env, chooseStore);
}
