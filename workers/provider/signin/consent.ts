// Step 3, consent (docs/signin.md; 개인정보 보호법 §17 ②), for a purpose that asks it: the terms
// as the client is now, the agreement ending the sign-in in one store call, then the link written
// and the purpose's end; and what a person's link already covers.

import type { Client } from "../store/clients";
import { consentForLogin, type Link } from "../store/directory/index";
import { auditAll, auditRecord } from "../store/one-time/index";
import { cancel, conflict, consentTerms, goneMeanwhile, render, type Flow } from "./flow";
import { t } from "./i18n";
import type { Shared } from "./purpose";
import type { Transaction } from "./transaction";

/** What a link shares with the client: its plid and the client's items it covers. */
export function sharedBy(link: Link, client: Client): Shared {
  return { plid: link.plid, items: client.items.filter((i) => link.items.includes(i)) };
}

/** Whether a link holds consent to everything the client asks. */
export function covers(link: Pick<Link, "items">, client: Client): boolean {
  return client.items.every((i) => link.items.includes(i));
}

/**
 * `consentDue` of the identify step's record: true when the person's link, read with the number,
 * does not cover the client's items; absent when it does or was not read (the code step reads it).
 */
export function consentDue(client: Client, link: Pick<Link, "items"> | null | undefined): true | undefined {
  return link === null || (link !== undefined && !covers(link, client)) ? true : undefined;
}

/** The consent page answered: `agree=N` cancels; an agreement to the terms shown ends the sign-in. */
export async function consent(f: Flow): Promise<Response> {
  const agree = f.params.get("agree");
  if (agree === "N") return cancel(f);
  if (agree !== "Y") return render(f, { text: t(f.ctx.lang, "errAgree"), field: "agree" });
  // An agreement holds for the terms shown: changed since (or not posted back), the page again.
  if (f.params.get("terms") !== consentTerms(f.client).version) {
    f.rc.log.event = "signin.consent_terms_changed";
    return render(f, { text: t(f.ctx.lang, "errTermsChanged") });
  }
  const done = await f.h.stub.signinFinish(f.h.key, ["consent"]);
  if (!done.ended) return conflict(f, done.record);
  return consented(f, done.record!);
}

/** The consent agreed and the sign-in ended (`tx` as it was): the link written, then the purpose's end. */
export async function consented(f: Flow, tx: Transaction): Promise<Response> {
  const sub = tx.subscriber!;
  const consented = await consentForLogin(f.env, f.client.clientId, sub.id, f.client.items);
  if (consented === null) return goneMeanwhile(f);
  const consentEvent = auditRecord("consent", f.client.clientId, "ok", { items: f.client.items.length });
  const optIn = tx.autoLoginEligible === true && (tx.autoLoginOptIn === true || f.params.get("autoLogin") === "Y");
  // The consent is written: its event goes with the code (one write), or alone when nothing is
  // minted, whether the sign-in ended (gone meanwhile) or failed (a store down before the code).
  let completed: Response | null = null;
  try {
    completed = await f.purpose.end(f, {
      tx,
      client: f.client,
      subscriberId: sub.id,
      optIn,
      shared: {
        plid: consented.plid,
        items: f.client.items,
        consented: { subscriber: consented.subscriber, audit: consentEvent },
      },
    });
  } finally {
    if (!completed) f.rc.waitUntil(auditAll(f.env, [consentEvent]));
  }
  return completed ?? goneMeanwhile(f);
}
