// An app's events in the developer console (docs/events.md "Deliveries and pausing"): the event
// types it takes (in its settings), a test event sent at once to its events URI (only to an app
// that takes the `test` type, at most TEST_EVENTS_PER_MINUTE a minute, to an address the host rules
// accept), the last 100 delivery attempts by status class, and its events paused after 24 hours of
// failures, resumed by an owner.

import { ApiError, E } from "../core/errors";
import { html, type SafeHtml } from "../core/html";
import { json } from "../core/http";
import type { RequestContext } from "../core/router";
import { commonConfig } from "../core/config";
import { eventsUriProblem } from "../provider/store/hosts";
import { hidden, when, type Viewer } from "../frame/layout";
import { clientSecrets, type AdminClient } from "../provider/store/clients";
import {
  deliveriesOf,
  reserveTestEvent,
  settleTestEvent,
  TEST_EVENTS_PER_MINUTE,
} from "../provider/store/event-deliveries";
import { resumeAppEvents, sendTestEvent } from "../provider/store/flows/events";
import { setStreamFromConsole } from "../provider/store/flows/stream-pause";
import { audit } from "../provider/store/one-time/index";
import { actorOf, type DevEnv, type DevSigned } from "./gate";
import { d } from "./i18n";

/** The app's events as the API shows them. */
export async function eventsView(env: DevEnv, app: AdminClient) {
  return {
    event_types: app.eventTypes,
    events_uri: app.eventsUri,
    paused_since: app.eventsPausedAt === null ? null : new Date(app.eventsPausedAt).toISOString(),
    deliveries: (await deliveriesOf(env, app.clientId)).map((x) => ({
      at: new Date(x.at).toISOString(),
      type: x.type,
      class: x.class,
      attempt: x.attempt,
    })),
  };
}

/** Sends a test event now: its delivery's status class. */
export async function testEvent(env: DevEnv, s: DevSigned, app: AdminClient) {
  if (!app.eventTypes.includes("test"))
    throw E.invalidBecause("event_types", "the app does not take the test type: add `test` to its event types");
  if (!app.eventsUri) throw E.invalidBecause("events_uri", "the app has no events URI");
  const problem = eventsUriProblem(app.eventsUri, commonConfig(env).devMode);
  if (problem) throw E.invalidBecause("events_uri", problem);
  const now = Date.now();
  const slot = await reserveTestEvent(env, app.clientId, now);
  if (slot === null)
    throw new ApiError("too_many_requests", `At most ${TEST_EVENTS_PER_MINUTE} test events a minute.`, {
      status: 429,
      headers: { "Retry-After": "60" },
      cause: "test events",
    });
  const secrets = await clientSecrets(env, app.clientId, 0);
  if (!secrets) throw E.noSuch("app");
  const result = await sendTestEvent(env, app.clientId, app.eventsUri, secrets.current.secret, now);
  await settleTestEvent(env, app.clientId, slot, result);
  await audit(env, "event.test", app.clientId, result === "delivered" ? "ok" : "refused", {
    actor: actorOf(s.dev),
    class: result,
  });
  return { class: result };
}

/** An owner resumes the app's paused events: the waiting ones go within RESUME_CHECK (5 minutes). */
export async function resume(env: DevEnv, s: DevSigned, app: AdminClient) {
  if (!(await resumeAppEvents(env, app.clientId))) throw E.invalidBecause("events", "they are not paused");
  await audit(env, "event.resumed", app.clientId, "ok", { actor: actorOf(s.dev) });
  return { resumed: true };
}

/**
 * An owner pauses (`paused`) or resumes (`enabled`) the app's Shared Signals stream, as the app's
 * own `POST /ssf/status` does; audited with who. 404 without a stream; a disabled stream (the app's
 * own choice) or one already so is refused (400).
 */
export async function setStream(env: DevEnv, s: DevSigned, app: AdminClient, to: "paused" | "enabled") {
  const was = await setStreamFromConsole(env, app.clientId, to, "Paused in the developer console");
  if (was === null) throw E.noSuch("stream");
  if (was === "disabled") throw E.invalidBecause("stream", "it is disabled: its app enables it");
  if (was === to) throw E.invalidBecause("stream", `it is already ${to}`);
  await audit(env, to === "paused" ? "ssf.stream_paused" : "ssf.stream_resumed", app.clientId, "ok", {
    actor: actorOf(s.dev),
  });
  return { status: to };
}

const CLASS_KEY = {
  delivered: "classDelivered",
  refused: "classRefused",
  failed: "classFailed",
  timed_out: "classTimedOut",
} as const;

/** The events section of an app's page. */
export function eventsSection(
  v: Viewer,
  base: string,
  view: Awaited<ReturnType<typeof eventsView>>,
  owner: boolean,
  member: boolean,
): SafeHtml {
  const L = v.lang;
  const form = (path: string, label: string, cls = "secondary") =>
    html`<form class="inline" method="post" action="${base}${path}">${hidden(v)}<button type="submit" class="${cls}">${label}</button></form>`;
  const rows = view.deliveries.map(
    (x) =>
      html`<tr><td>${when(x.at, L)}</td><td><code>${x.type}</code></td><td>${d(L, CLASS_KEY[x.class])}</td><td>${x.attempt}</td></tr>`,
  );
  return html`<h2>${d(L, "events")}</h2>
<p class="hint">${d(L, "eventsLead", { types: view.event_types.join(", ") || "—" })}</p>
${
  view.paused_since
    ? html`<div class="alert" role="alert"><p>${d(L, "eventsPaused", { at: when(view.paused_since, L) })}</p></div>${owner ? form("/events/resume", d(L, "eventsResume"), "") : ""}`
    : ""
}
${member && view.event_types.includes("test") && view.events_uri ? form("/events/test", d(L, "testEvent")) : ""}
${
  rows.length
    ? html`<table><caption>${d(L, "deliveries")}</caption><thead><tr><th scope="col">${d(L, "deliveryAt")}</th><th scope="col">${d(L, "deliveryType")}</th><th scope="col">${d(L, "deliveryClass")}</th><th scope="col">${d(L, "deliveryAttempt")}</th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<p>${d(L, "noDeliveries")}</p>`
}`;
}

export { json };
export type { RequestContext };
