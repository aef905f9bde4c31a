// /admin/reviews and an app's owner (docs/developers.md "Review", docs/operations.md "Admin API"):
// the queue of developers' apps waiting for review, an editor's approval (the app goes live with
// what was reviewed) or rejection with a reason the developer sees, and an editor's invitation of
// an owner for an app no developer owns (an operator's, or one whose owners all left).

import { auditBy, service, type Caller } from "./access";
import { adminConfig, type AdminEnv } from "./config";
import { E } from "../core/errors";
import { normalizePhone } from "../core/spec";
import { forgetClient, getClient, resumeClientEvents } from "../provider/store/clients";
import { memberKey, noticeOwners, ownerCount, putTeamInvite } from "../provider/store/developers";
import { isAppTestNumber } from "../provider/store/directory/index";
import { pendingReviews, reviewById, type Review } from "../provider/store/reviews";
import { decideReview } from "../provider/store/flows/apps";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const REASON_MAX = 500;

/** An app's terms a review is about: what it shows people. */
export interface Terms {
  name: string;
  items: string[];
  purpose: string | null;
  retention: string | null;
}

/** A review as the API answers it: what was proposed beside what the app has now. */
export interface ReviewView {
  id: string;
  client_id: string;
  state: Review["state"];
  proposed: Terms;
  current: Terms | null;
  stage: "testing" | "live" | null;
  redirect_uris: string[];
  submitted_by: string;
  submitted_at: string | null;
  decided_by: string | null;
  decided_at: string | null;
  reason: string | null;
}

async function view(env: AdminEnv, r: Review): Promise<ReviewView> {
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
export const listReviews = service<void, { reviews: ReviewView[] }>("viewer", "GET", async (env) => {
  const pending = await pendingReviews(env);
  return { reviews: await Promise.all(pending.map((r) => view(env, r))) };
});

async function decide(
  env: AdminEnv,
  caller: Caller,
  id: string,
  decision: "approved" | "rejected",
  reason: string | null,
): Promise<ReviewView> {
  const decided = /^rv_[A-Za-z0-9_-]{1,40}$/.test(id)
    ? await decideReview(env, id, decision, caller.actor.id, reason)
    : null;
  if (!decided) {
    const r = /^rv_[A-Za-z0-9_-]{1,40}$/.test(id) ? await reviewById(env, id) : null;
    if (!r) throw E.noSuch("review");
    throw E.invalidBecause("review", `it is ${r.state}, not pending`);
  }
  caller.rc.log.clientId = decided.clientId;
  forgetClient(decided.clientId);
  await auditBy(env, caller, decision === "approved" ? "review.approved" : "review.rejected", decided.clientId);
  await noticeOwners(
    env,
    decided.clientId,
    decision === "approved" ? "review_approved" : "review_rejected",
    caller.actor.id,
    null,
  );
  return view(env, decided);
}

/** `POST /admin/reviews/:id/approve`. */
export const approveReview = service<{ id: string }, ReviewView>("editor", "POST", (env, caller, { id }) =>
  decide(env, caller, id, "approved", null),
);

/** `POST /admin/reviews/:id/reject` `{"reason"}`: the reason the developer reads. */
export const rejectReview = service<{ id: string; reason: unknown }, ReviewView>(
  "editor",
  "POST",
  (env, caller, { id, reason }) => {
    const r = typeof reason === "string" ? reason.trim() : "";
    if (r.length === 0 || r.length > REASON_MAX || /[\x00-\x08\x0b-\x1f\x7f]/.test(r))
      throw E.invalidBecause("reason", `must be 1 to ${REASON_MAX} characters the developer will read`);
    return decide(env, caller, id, "rejected", r);
  },
);

/**
 * `POST /admin/clients/:id/owner` `{"phone"}`: invites the number's person to own an app no developer
 * owns; they accept on /developers (never silently). An owned app's owners manage their own team.
 */
export const inviteOwner = service<
  { clientId: string; phone: unknown },
  { client_id: string; masked: string; role: "owner"; expires_at: string | null }
>("editor", "POST", async (env, caller, input) => {
  const cfg = adminConfig(env);
  const phone = typeof input.phone === "string" ? normalizePhone(input.phone) : undefined;
  if (!phone) throw E.invalidBecause("phone", "must be a mobile number: 01X then 7 or 8 digits");
  if (isAppTestNumber(phone)) throw E.invalidBecause("phone", "a test number cannot own an app");
  const app = await getClient(env, input.clientId);
  if (!app) throw E.noSuch("client");
  caller.rc.log.clientId = app.clientId;
  if (await ownerCount(env, app.clientId)) throw E.invalidBecause("client", "it has an owner: its owners invite");
  const made = await putTeamInvite(env, {
    clientId: app.clientId,
    phoneKey: await memberKey(cfg.sealKey, phone),
    role: "owner",
    masked: `${phone.slice(0, 3)}-${"*".repeat(phone.length - 7)}-${phone.slice(-4)}`,
    invitedBy: caller.actor.id,
  });
  await auditBy(env, caller, "team.invited", app.clientId, "ok", { role: "owner" });
  return { client_id: app.clientId, masked: made.masked, role: "owner", expires_at: iso(made.expiresAt) };
});

/** `POST /admin/clients/:id/events/resume`: an app no developer owns, its paused events resumed. */
export const resumeEvents = service<{ clientId: string }, { client_id: string; resumed: true }>(
  "editor",
  "POST",
  async (env, caller, { clientId }) => {
    const app = await getClient(env, clientId);
    if (!app) throw E.noSuch("client");
    caller.rc.log.clientId = app.clientId;
    if (await ownerCount(env, app.clientId)) throw E.invalidBecause("client", "it has an owner: its owners resume");
    if (!(await resumeClientEvents(env, app.clientId))) throw E.invalidBecause("events", "they are not paused");
    await auditBy(env, caller, "event.resumed", app.clientId);
    return { client_id: app.clientId, resumed: true };
  },
);
