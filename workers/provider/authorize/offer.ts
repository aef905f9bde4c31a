// The answer to a passkey offer (docs/passkeys.md "The offer"): a POST of the offer's signed ticket
// to the authorization endpoint, with the browser's registration or "not now". The ticket is taken
// once in the person's shard (by the passkey it makes, or alone), so one offer mints one code; then
// the sign-in ends as it would have without the offer (`finish`): the code to the app.

import type { Params } from "../../core/http";
import type { RequestContext } from "../../core/router";
import { providerConfig, type ProviderEnv } from "../config";
import {
  signinConfig,
  t,
  bareContext,
  stopPage,
  enrol,
  takeTicket,
  browserHashOf,
  refusalText,
  offerFailed,
  openTicket,
  type Transaction,
} from "../signin/index";
import { findClient } from "../store/clients";
import { subscriberById } from "../store/directory/index";
import { sameHash, type Prompt } from "../store/one-time/index";
import type { IdentityItem } from "../../core/spec";
import { finish } from "./complete";
import { registeredRedirect } from "./validate";

/** What an offer's ticket carries to end the sign-in with (`passkeyOffer`): its app, redirect, state, prompt, PKCE challenge, the box, and what is shared. */
interface Resume {
  c: string;
  u: string;
  s: string;
  p: Prompt | null;
  x: string | null;
  o: boolean;
  pl: string;
  i: IdentityItem[];
  /** An OpenID Connect request's nonce holder, and when the number was proven. */
  oi?: { nonce?: string };
  pa?: number;
}

export async function answerOffer(
  req: Request,
  env: ProviderEnv,
  rc: RequestContext,
  params: Params,
): Promise<Response> {
  const ticket = await openTicket(env, params.get("enrol"));
  const resume = ticket?.r as Resume | undefined;
  const lang = ticket?.l ?? "ko";
  const gone = () =>
    stopPage(bareContext(signinConfig(env).operator, lang), t(lang, "unknownTitle"), t(lang, "unknownText"));
  if (!ticket || !resume || !sameHash(await browserHashOf(req), ticket.b)) {
    rc.log.event = "signin.offer_refused";
    return gone();
  }
  // the record `finish` reads: the request's answer-shaping fields (the rest it never reads)
  const tx = {
    clientId: resume.c,
    redirectUri: resume.u,
    state: resume.s,
    prompt: resume.p ?? undefined,
    codeChallenge: resume.x,
    lang,
    ...(resume.oi && { oidc: resume.oi, provenAt: resume.pa }),
  } as Transaction;
  const client = await findClient(env, tx.clientId, providerConfig(env).clientCacheMs);
  if (!client || registeredRedirect(client, tx.redirectUri, providerConfig(env).devMode) === undefined) return gone();
  let made: Awaited<ReturnType<typeof enrol>> | null = null;
  if (params.get("credential")) made = await enrol(req, env, rc, ticket, params.get("credential"));
  else if (!(await takeTicket(env, ticket))) {
    rc.log.event = "signin.offer_replayed";
    return gone();
  }
  if (made && !made.ok && made.reason === "replayed") return gone();
  const subscriber = await subscriberById(env, ticket.s);
  if (!subscriber) return gone();
  const end = { tx, client, subscriberId: ticket.s, optIn: resume.o, shared: { plid: resume.pl, items: resume.i } };
  const done = await finish(req, env, rc, signinConfig(env), end, subscriber);
  if (!done) return gone();
  if (made && !made.ok) {
    // the sign-in ends all the same: the page says why nothing was made, and goes on to the app
    return offerFailed(env, lang, client.name, refusalText(lang, made.reason), done.headers.get("Location")!);
  }
  if (made?.ok) rc.log.event = "signin.passkey_created";
  return done;
}
