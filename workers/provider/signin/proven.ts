// A number proven without a code (docs/signin.md "State machine"): by a passkey, or by a text the
// person sent from it. The sign-in goes on as after a right code: no other person's automatic login
// answers from this browser any more, then consent when due (a record at the consent step, in the
// number's object as after a code), else the purpose's end.

import type { Telco } from "../../core/spec";
import type { LinkRow } from "../store/directory/index";
import { storeFor } from "../store/one-time/index";
import { maskPhone } from "./carrier";
import { consentDue, covers, sharedBy } from "./consent";
import { autoLoginEligible, endOtherSubscribersOnDevice } from "./device";
import { at, goneMeanwhile, render, type Flow } from "./flow";
import { phoneKey } from "./limits";
import { withProof } from "./proved-browser";
import { handleOf, nextTxId, txKey, type Transaction, type TxHandle } from "./transaction";

/** Who was proven, and how: what the record keeps of it beside the person. */
export interface Proof {
  person: { id: number; telco: Telco; phone: string };
  /** Their link to the app (read with the proof), or null. */
  link: LinkRow | null;
  /** When the number's risk window ends (no automatic login until then), or null. */
  risk: number | null;
  /** Names the record of the consent step apart from a code's: `passkey`, `text`. */
  by: string;
  /** What the record says of the proof (`passkey`, `provenAt`…). */
  record: Partial<Transaction>;
}

export async function numberProven(f: Flow, p: Proof): Promise<Response> {
  f.rc.log.event = `signin.${p.by}`;
  await endOtherSubscribersOnDevice(f.req, f.env, p.person.id);
  const eligible = f.purpose.consent && p.risk === null && autoLoginEligible(f.client, p.person.telco, f.h.tx.prompt);
  const key = await phoneKey(p.person.phone);
  const record: Transaction = {
    ...f.h.tx,
    v: 0,
    step: "consent",
    movedTo: undefined,
    subscriber: {
      id: p.person.id,
      telco: p.person.telco,
      phoneKey: key,
      masked: maskPhone(p.person.phone),
      testOtpHash: null,
    },
    challenge: null,
    autoLoginEligible: eligible,
    autoLoginOptIn: eligible && f.params.get("autoLogin") === "Y",
    consentDue: f.purpose.consent ? consentDue(f.client, p.link) : undefined,
    provenAt: Date.now(),
    riskUntil: p.risk ?? undefined,
    autoLoginShown: undefined,
    passkeyRequired: undefined,
    ...p.record,
  };
  if (f.purpose.consent && (!p.link || !covers(p.link, f.client))) {
    const id = await nextTxId(`${f.h.id}:${p.by}`, key, f.shards);
    const next: TxHandle = { id, key: await txKey(id), stub: storeFor(f.env, id, f.shards), tx: record };
    await next.stub.signinCreate(next.key, record);
    if (!f.h.page) await f.h.stub.signinFinish(f.h.key, ["identify"]);
    return withProof(render(at(f, handleOf(next, record))), f.req, f.env, key, p.person.id);
  }
  if (!f.h.page) await f.h.stub.signinFinish(f.h.key, ["identify"]);
  const done = await f.purpose.end(f, {
    tx: record,
    client: f.client,
    subscriberId: p.person.id,
    optIn: record.autoLoginOptIn === true,
    shared: p.link ? sharedBy(p.link, f.client) : undefined,
  });
  return done ? withProof(done, f.req, f.env, key, p.person.id) : goneMeanwhile(f);
}
