// Review and the live stage, the developer's side (docs/developers.md "Review"): an owner submits a
// testing app for review; on a live app a change of its name, items, purposes or retention is
// submitted for review instead of applied (the app keeps working with what was approved), while a
// redirect URI change or a secret rotation applies at once but needs a sign-in from the last 10
// minutes, and the app's other owners are told on their next visit.

import { ApiError, E } from "../core/errors";
import { randomAlphanumeric } from "../core/crypto";
import { html, type SafeHtml } from "../core/html";
import type { RequestContext } from "../core/router";
import { REAUTH_HEADER } from "../admin/access";
import { adminConfig, MAX_ROTATION_GRACE_SECONDS } from "../admin/config";
import { hidden, when, type Viewer } from "../frame/layout";
import {
  forgetClient,
  rotateClientSecret,
  sealSecret,
  type AdminClient,
  type ClientPatch,
} from "../provider/store/clients";
import { CONSOLE_FRESH_MS } from "../provider/store/console-session";
import { noticeOwners, takeNotices, type DeveloperNotice } from "../provider/store/developers";
import { reviewsOf, submitReview, withdrawReview, type Proposed, type Review } from "../provider/store/reviews";
import { audit } from "../provider/store/one-time/index";
import { actorOf, type DevEnv, type DevSigned } from "./gate";
import { d, type Lang } from "./i18n";

const CLIENT_SECRET_LENGTH = 64;
/** The fields a live app changes through review. */
export const REVIEWED = ["name", "items", "purpose", "retention"] as const;

const proposedOf = (app: AdminClient, p: ClientPatch = {}): Proposed => ({
  name: p.name ?? app.name,
  items: p.items ?? app.items,
  purpose: p.purpose !== undefined ? p.purpose : app.purpose,
  retention: p.retention !== undefined ? p.retention : app.retention,
});

/** The app's pending review, if any. */
export async function pendingOf(env: DevEnv, clientId: string): Promise<Review | null> {
  const [last] = await reviewsOf(env, clientId, 1);
  return last?.state === "pending" ? last : null;
}

/** A 403 that a fresh sign-in lifts: a live app's redirect URIs and secret need a proof from the last 10 minutes. */
export function needsFreshProof(s: DevSigned): void {
  if (Date.now() - s.h.session.provenAt <= CONSOLE_FRESH_MS) return;
  throw new ApiError("access_denied", d(s.v.lang, "reauthText"), {
    status: 403,
    cause: "stale proof",
    headers: { [REAUTH_HEADER]: "1" },
  });
}

export function reviewView(r: Review | null) {
  return (
    r && {
      id: r.id,
      state: r.state,
      proposed: r.proposed,
      submitted_at: new Date(r.submittedAt).toISOString(),
      decided_at: r.decidedAt === null ? null : new Date(r.decidedAt).toISOString(),
      reason: r.reason,
    }
  );
}

/** An owner submits a testing app as it is now. */
export async function submit(env: DevEnv, rc: RequestContext, s: DevSigned, app: AdminClient) {
  if (app.stage === "live")
    throw E.invalidBecause("app", "it is live: a change of its name, items, purpose or retention is submitted with it");
  const r = await submitReview(env, app.clientId, proposedOf(app), actorOf(s.dev));
  if (!r) throw E.invalidBecause("app", "it is in review already");
  await audit(env, "review.submitted", app.clientId, "ok", { actor: actorOf(s.dev), stage: app.stage });
  return reviewView(r);
}

export async function withdraw(env: DevEnv, rc: RequestContext, s: DevSigned, app: AdminClient) {
  if (!(await withdrawReview(env, app.clientId, actorOf(s.dev)))) throw E.noSuch("pending review");
  await audit(env, "review.withdrawn", app.clientId, "ok", { actor: actorOf(s.dev) });
}

/**
 * How a settings change lands. A testing app: at once, unless it is in review (the reviewed fields
 * wait for the decision or a withdrawal). A live app: the reviewed fields become a review, the rest
 * applies at once; new redirect URIs need a fresh proof and tell the other owners.
 */
export async function splitChange(
  env: DevEnv,
  s: DevSigned,
  app: AdminClient,
  body: Record<string, unknown>,
  patch: ClientPatch,
): Promise<{ direct: ClientPatch; review: Review | null }> {
  const reviewed = REVIEWED.filter((f) => body[f] !== undefined);
  if (app.stage === "testing") {
    if (reviewed.length > 0 && (await pendingOf(env, app.clientId)))
      throw E.invalidBecause(reviewed.join(", "), "the app is in review: withdraw it to change these");
    return { direct: patch, review: null };
  }
  if (patch.redirectUris !== undefined) needsFreshProof(s);
  const direct: ClientPatch = { ...patch };
  delete direct.name;
  delete direct.items;
  delete direct.purpose;
  delete direct.retention;
  let review: Review | null = null;
  if (reviewed.length > 0) {
    review = await submitReview(env, app.clientId, proposedOf(app, patch), actorOf(s.dev));
    if (!review) throw E.invalidBecause(reviewed.join(", "), "a change is in review already");
    await audit(env, "review.submitted", app.clientId, "ok", { actor: actorOf(s.dev), stage: "live" });
  }
  return { direct, review };
}

/** After a live app's redirect URIs changed: its other owners are told on their next visit. */
export async function redirectsChanged(env: DevEnv, s: DevSigned, app: AdminClient): Promise<void> {
  if (app.stage === "live") await noticeOwners(env, app.clientId, "redirect_uris", actorOf(s.dev), s.dev.subscriberId);
}

/** A new secret, shown once; the old one keeps working for the grace period (the admin API's default). */
export async function rotate(env: DevEnv, s: DevSigned, app: AdminClient, body: Record<string, unknown>) {
  if (app.stage === "live") needsFreshProof(s);
  const dflt = adminConfig(env as never).rotationGraceSeconds;
  const g = body.grace_seconds ?? dflt;
  if (typeof g !== "number" || !Number.isInteger(g) || g < 0 || g > MAX_ROTATION_GRACE_SECONDS)
    throw E.invalidBecause("grace_seconds", `must be a whole number from 0 to ${MAX_ROTATION_GRACE_SECONDS}`);
  const secret = randomAlphanumeric(CLIENT_SECRET_LENGTH);
  const until = g > 0 ? Date.now() + g * 1000 : null;
  if (!(await rotateClientSecret(env, app.clientId, await sealSecret(env, app.clientId, secret), until)))
    throw E.noSuch("app");
  forgetClient(app.clientId);
  await audit(env, "client.secret_rotated", app.clientId, "ok", { actor: actorOf(s.dev), grace_seconds: g });
  await noticeOwners(env, app.clientId, "secret_rotated", actorOf(s.dev), s.dev.subscriberId);
  return {
    client_id: app.clientId,
    client_secret: secret,
    previous_secret_valid_until: until && new Date(until).toISOString(),
  };
}

/** The person's notices, taken (shown once), with their apps' names. */
export async function noticesFor(env: DevEnv, s: DevSigned): Promise<DeveloperNotice[]> {
  return takeNotices(env, s.dev.subscriberId);
}

const NOTICE_KEY = {
  redirect_uris: "noticeRedirects",
  secret_rotated: "noticeRotated",
  review_approved: "noticeApproved",
  review_rejected: "noticeRejected",
  events_paused: "noticeEventsPaused",
} as const;

export function noticesSection(L: Lang, notices: DeveloperNotice[], names: Map<string, string>): SafeHtml {
  if (notices.length === 0) return html``;
  return html`<div class="notice" role="status"><ul>${notices.map(
    (n) =>
      html`<li>${d(L, NOTICE_KEY[n.kind], { app: names.get(n.clientId) ?? n.clientId, at: when(new Date(n.createdAt).toISOString(), L) })}</li>`,
  )}</ul></div>`;
}

/** The review section of an app's page: its state, the last decision's reason, submit or withdraw. */
export function reviewSection(
  v: Viewer,
  base: string,
  app: AdminClient,
  last: Review | null,
  owner: boolean,
): SafeHtml {
  const L = v.lang;
  const form = (path: string, label: string, cls = "") =>
    html`<form class="inline" method="post" action="${base}${path}">${hidden(v)}<button type="submit"${cls ? html` class="${cls}"` : ""}>${label}</button></form>`;
  const pending = last?.state === "pending";
  const state = pending
    ? html`<p>${d(L, app.stage === "live" ? "reviewChangePending" : "reviewPending", { at: when(new Date(last!.submittedAt).toISOString(), L) })}</p>`
    : last?.state === "rejected"
      ? html`<div class="alert" role="alert"><p>${d(L, "reviewRejected")}</p><p>${last.reason ?? ""}</p></div>`
      : last?.state === "approved"
        ? html`<p>${d(L, "reviewApproved", { at: when(new Date(last.decidedAt ?? 0).toISOString(), L) })}</p>`
        : html`<p>${d(L, app.stage === "live" ? "reviewLiveNone" : "reviewNone")}</p>`;
  const actions = !owner
    ? ""
    : pending
      ? form("/review/withdraw", d(L, "reviewWithdraw"), "secondary")
      : app.stage === "testing"
        ? form("/review", d(L, "reviewSubmit"))
        : "";
  return html`<h2>${d(L, "review")}</h2>${state}${actions}`;
}
