// What a sign-in is for. The steps, pages, limits and store calls are the same whatever the
// purpose; this object holds everything in which purposes differ, so the steps never ask which
// one they serve. An app's sign-in (workers/provider/authorize/purpose.ts: consent, then a code for
// the app), and the first-party pages' (./first-party.ts: the person's own page,
// workers/provider/account/purpose.ts, a session, docs/account.md; and any other page of the
// service's that proves a number, each naming itself: its mark, its words, its end).

import type { Params } from "../../core/http";
import type { RequestContext } from "../../core/router";
import type { IdentityItem } from "../../core/spec";
import type { ProviderEnv } from "../config";
import type { AuditRecord } from "../store/one-time/index";
import type { Client } from "../store/clients";
import type { Subscriber } from "../store/directory/index";
import type { SigninConfig } from "./config";
import type { FirstPartyWords, Restart } from "./pages";
import type { Transaction, TxHandle } from "./transaction";

/** A step submission as it arrived, with the configuration it is answered by. */
export interface Submission {
  req: Request;
  env: ProviderEnv;
  rc: RequestContext;
  cfg: SigninConfig;
  shards: number;
  params: Params;
}

/** What the person shares with an app: the link's plid and the app's items it covers. */
export interface Shared {
  plid: string;
  /** The client's agreed items the subscriber consented to. */
  items: readonly IdentityItem[];
  /**
   * Given by a consent just written (`consentForLogin`): the subscriber as read with it, the link's
   * login recorded already, and the consent's audit event, appended with the code.
   */
  consented?: { subscriber: Subscriber; audit: AuditRecord };
}

/** A sign-in that proved its number and has nothing left to ask: what its purpose's end takes. */
export interface SigninEnd {
  /** The record as its last store call left it. */
  tx: Transaction;
  client: Client;
  subscriberId: number;
  /** The automatic-login box ticked on a sign-in that offered it. */
  optIn: boolean;
  /** For a purpose that asks consent: what the person shares with the client. */
  shared?: Shared;
}

/**
 * How a sign-in proved its number, for its success's audit detail: `method` (`passkey`, or `sms`
 * for a code), and `fixedCode` when that code was a fixed one (a review test number's, a test
 * entry's) and no SMS was sent. The metrics count these apart (store/metrics/series.ts).
 */
export function proofDetail(tx: Transaction): { method: "passkey" | "text" | "sms"; fixedCode?: true } {
  if (tx.passkey) return { method: "passkey" };
  if (tx.texted) return { method: "text" };
  return tx.subscriber?.testOtpHash ? { method: "sms", fixedCode: true } : { method: "sms" };
}

export interface SigninPurpose {
  /**
   * The mark its records carry (`SigninRecord.purpose`, set with the first page): a record is
   * continued only by its own purpose (an app's step posted to /account is refused, and the reverse).
   */
  readonly mark: Transaction["purpose"];
  /**
   * A first-party page's words (its name, its identify page's lead): what the pages show of the
   * purpose. None for an app's sign-in, whose pages name the app.
   */
  readonly words?: FirstPartyWords;
  /** What its audit events add to their detail. */
  readonly audit: Readonly<Record<string, string>>;
  /**
   * Whether the person is asked to share their identity with the client: the link is read with the
   * number and at the code step, the consent step follows when it does not cover the client's
   * items, and the end is given what is shared (`SigninEnd.shared`).
   */
  readonly consent: boolean;
  /**
   * Whether a code entry and an agreement are tried first in one store call each, the object
   * checking the page's CSRF token and browser cookie itself (`gatedStep`, docs/signin.md "Gated
   * steps"); the store settles them for records without a purpose mark only.
   */
  readonly gated: boolean;
  /** The client the sign-in is for, as it is now; null when it is gone or disabled. */
  client(env: ProviderEnv, tx: Transaction): Client | null | Promise<Client | null>;
  /** Whether the sign-in may still end at the client (an app that still holds its redirect URI). */
  reaches(env: ProviderEnv, client: Client, tx: Transaction): boolean;
  /** The way on from a stop page of a known sign-in. */
  restart(h: TxHandle): Restart;
  /** The answer to `restart=Y` (the way back from a stop page), the sign-in ended. */
  restarted(tx: Transaction): Response;
  /** The answer to a cancel, the sign-in ended. */
  cancelled(tx: Transaction): Response;
  /**
   * The sign-in's end once the number is proven and nothing is left to ask; null, with nothing
   * done, when what it stood on went away meanwhile (the person then starts again).
   */
  end(s: Submission, e: SigninEnd): Promise<Response | null>;
}
