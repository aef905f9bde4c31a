// /admin/reviews and an app's owner (docs/developers.md "Review", docs/operations.md "Admin API"):
// the queue of developers' apps waiting for review, an editor's approval (the app goes live with
// what was reviewed) or rejection with a reason the developer sees, and an editor's invitation of
// an owner for an app no developer owns (an operator's, or one whose owners all left).

import { auditBy, actorOf } from "./access";
import { adminConfig, type AdminEnv } from "./config";
import { E } from "../core/errors";
import { json } from "../core/http";
import type { RequestContext } from "../core/router";
import { normalizePhone } from "../core/spec";
import { onlyFields, readJsonObject } from "./steps";
import { forgetClient, getClient, resumeClientEvents } from "../provider/store/clients";
import { memberKey, noticeOwners, ownerCount, putTeamInvite } from "../provider/store/developers";
import { isAppTestNumber } from "../provider/store/directory/index";
import { pendingReviews, reviewById, type Review } from "../provider/store/reviews";
import { decideReview } from "../provider/store/flows/apps";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const REASON_MAX = 500;

/** A review as the API answers it: what was proposed beside what the app has now. */
async function view(env: AdminEnv, r: Review) {
  const app = await getClient(env, r.clientId);
  return {
    id: r.id,
    client_id: r.clientId,
    state: r.state,
    proposed: r.proposed,
    current: app && { name: app.name, items: app.items, purpose: app.purpose, retention: app.retention },
    stage: app?.stage ?? null,
    redirect_uris: app?.redirectUris ?? [],
    submitted_by: r.submittedBy,
    submitted_at: iso(r.submittedAt),
    decided_by: r.decidedBy,
    decided_at: iso(r.decidedAt),
    reason: r.reason,
  };
}

/** `GET /admin/reviews`: the pending reviews, oldest first. */
export async function listReviews(_req: Request, env: AdminEnv): Promise<Response> {
  const pending = await pendingReviews(env);
  return json({ reviews: await Promise.all(pending.map((r) => view(env, r))) });
}

async function decide(req: Request, env: AdminEnv, rc: RequestContext, decision: "approved" | "rejected") {
  const body = await readJsonObject(req, adminConfig(env).maxBodyBytes);
  onlyFields(body, ["reason"]);
  let reason: string | null = null;
  if (decision === "rejected") {
    const r = typeof body.reason === "string" ? body.reason.trim() : "";
    if (r.length === 0 || r.length > REASON_MAX || /[\x00-\x08\x0b-\x1f\x7f]/.test(r))
      throw E.invalidBecause("reason", `must be 1 to ${REASON_MAX} characters the developer will read`);
    reason = r;
  } else if (body.reason !== undefined) throw E.invalidBecause("reason", "only a rejection takes one");
  const id = rc.params.id ?? "";
  const decided = /^rv_[A-Za-z0-9_-]{1,40}$/.test(id)
    ? await decideReview(env, id, decision, actorOf(rc).id, reason)
    : null;
  if (!decided) {
    const r = /^rv_[A-Za-z0-9_-]{1,40}$/.test(id) ? await reviewById(env, id) : null;
    if (!r) throw E.noSuch("review");
    throw E.invalidBecause("review", `it is ${r.state}, not pending`);
  }
  rc.log.clientId = decided.clientId;
  forgetClient(decided.clientId);
  await auditBy(env, rc, decision === "approved" ? "review.approved" : "review.rejected", decided.clientId);
  await noticeOwners(
    env,
    decided.clientId,
    decision === "approved" ? "review_approved" : "review_rejected",
    actorOf(rc).id,
    null,
  );
  return json(await view(env, decided));
}

/** `POST /admin/reviews/:id/approve`. */
export const approveReview = (req: Request, env: AdminEnv, rc: RequestContext) => decide(req, env, rc, "approved");
/** `POST /admin/reviews/:id/reject` `{"reason"}`. */
export const rejectReview = (req: Request, env: AdminEnv, rc: RequestContext) => decide(req, env, rc, "rejected");

/**
 * `POST /admin/clients/:id/owner` `{"phone"}`: invites the number's person to own an app no developer
 * owns; they accept on /developers (never silently). An owned app's owners manage their own team.
 */
export async function inviteOwner(req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const cfg = adminConfig(env);
  const body = await readJsonObject(req, cfg.maxBodyBytes);
  onlyFields(body, ["phone"]);
  const phone = typeof body.phone === "string" ? normalizePhone(body.phone) : undefined;
  if (!phone) throw E.invalidBecause("phone", "must be a mobile number: 01X then 7 or 8 digits");
  if (isAppTestNumber(phone)) throw E.invalidBecause("phone", "a test number cannot own an app");
  const app = await getClient(env, rc.params.id!);
  if (!app) throw E.noSuch("client");
  rc.log.clientId = app.clientId;
  if (await ownerCount(env, app.clientId)) throw E.invalidBecause("client", "it has an owner: its owners invite");
  const made = await putTeamInvite(env, {
    clientId: app.clientId,
    phoneKey: await memberKey(cfg.sealKey, phone),
    role: "owner",
    masked: `${phone.slice(0, 3)}-${"*".repeat(phone.length - 7)}-${phone.slice(-4)}`,
    invitedBy: actorOf(rc).id,
  });
  await auditBy(env, rc, "team.invited", app.clientId, "ok", { role: "owner" });
  return json({ client_id: app.clientId, masked: made.masked, role: "owner", expires_at: iso(made.expiresAt) }, 201);
}

/** `POST /admin/clients/:id/events/resume`: an app no developer owns, its paused events resumed. */
export async function resumeEvents(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const app = await getClient(env, rc.params.id!);
  if (!app) throw E.noSuch("client");
  rc.log.clientId = app.clientId;
  if (await ownerCount(env, app.clientId)) throw E.invalidBecause("client", "it has an owner: its owners resume");
  if (!(await resumeClientEvents(env, app.clientId))) throw E.invalidBecause("events", "they are not paused");
  await auditBy(env, rc, "event.resumed", app.clientId);
  return json({ client_id: app.clientId, resumed: true });
}
