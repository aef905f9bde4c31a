// Reviews of developers' apps (docs/developers.md "Review"), in D1 `app_reviews`. Every statement on
// it is here. An owner submits an app in testing (what it asks for, as it is then), or a change of a
// live app's name, items, purposes or retention; an editor approves or rejects it with a reason.
//
// Invariants:
// - an app has at most one pending review (a unique partial index: a second submission finds it);
// - a review is decided once: the decision is conditional on `pending`, and the approval writes what
//   was proposed (and the live stage) to the app in the same transaction (flows/apps.ts), so a
//   change made to the app after approval is never overwritten by it, and two editors deciding at
//   once cannot both win.

import { randomToken } from "../../core/crypto";
import { isIdentityItem, type IdentityItem } from "../../core/spec";

type DbEnv = { DB: D1Database };

/** What a review decides: the app's consent terms as the person will see them. */
export interface Proposed {
  name: string;
  items: IdentityItem[];
  purpose: string | null;
  retention: string | null;
}

export type ReviewState = "pending" | "approved" | "rejected" | "withdrawn";

export interface Review {
  id: string;
  clientId: string;
  state: ReviewState;
  proposed: Proposed;
  submittedBy: string;
  submittedAt: number;
  decidedBy: string | null;
  decidedAt: number | null;
  reason: string | null;
}

export type ReviewRow = {
  id: string;
  client_id: string;
  state: ReviewState;
  proposed: string;
  submitted_by: string;
  submitted_at: number;
  decided_by: string | null;
  decided_at: number | null;
  reason: string | null;
};

export function toReview(r: ReviewRow): Review {
  const p = JSON.parse(r.proposed) as Proposed;
  return {
    id: r.id,
    clientId: r.client_id,
    state: r.state,
    proposed: {
      name: p.name,
      items: (p.items ?? []).filter(isIdentityItem),
      purpose: p.purpose ?? null,
      retention: p.retention ?? null,
    },
    submittedBy: r.submitted_by,
    submittedAt: r.submitted_at,
    decidedBy: r.decided_by,
    decidedAt: r.decided_at,
    reason: r.reason,
  };
}

/** Opens a review of `proposed`; null when the app has one pending already. */
export async function submitReview(
  env: DbEnv,
  clientId: string,
  proposed: Proposed,
  submittedBy: string,
): Promise<Review | null> {
  const r = await env.DB.prepare(
    `INSERT INTO app_reviews (id, client_id, state, proposed, submitted_by, submitted_at)
     VALUES (?, ?, 'pending', ?, ?, ?) ON CONFLICT DO NOTHING RETURNING *`,
  )
    .bind(`rv_${randomToken(12)}`, clientId, JSON.stringify(proposed), submittedBy, Date.now())
    .first<ReviewRow>();
  return r && toReview(r);
}

/** The app's reviews, newest first (at most `limit`). */
export async function reviewsOf(env: DbEnv, clientId: string, limit = 10): Promise<Review[]> {
  const { results } = await env.DB.prepare(
    "SELECT * FROM app_reviews WHERE client_id = ? ORDER BY submitted_at DESC, id LIMIT ?",
  )
    .bind(clientId, limit)
    .all<ReviewRow>();
  return results.map(toReview);
}

/** The pending reviews, oldest first: the editors' queue. */
export async function pendingReviews(env: DbEnv, limit = 200): Promise<Review[]> {
  const { results } = await env.DB.prepare(
    "SELECT * FROM app_reviews WHERE state = 'pending' ORDER BY submitted_at, id LIMIT ?",
  )
    .bind(limit)
    .all<ReviewRow>();
  return results.map(toReview);
}

export async function reviewById(env: DbEnv, id: string): Promise<Review | null> {
  const r = await env.DB.prepare("SELECT * FROM app_reviews WHERE id = ?").bind(id).first<ReviewRow>();
  return r && toReview(r);
}

/**
 * The decision of a review, only while it is pending; it returns the review as decided (`toReview`
 * of its row), or no row when it was not pending (decided before, withdrawn, unknown).
 */
export function decisionStatement(
  env: DbEnv,
  id: string,
  decision: "approved" | "rejected",
  by: string,
  reason: string | null,
  now: number,
): D1PreparedStatement {
  return env.DB.prepare(
    `UPDATE app_reviews SET state = ?, decided_by = ?, decided_at = ?, reason = ?
     WHERE id = ? AND state = 'pending' RETURNING *`,
  ).bind(decision, by, now, reason, id);
}

/** The owner withdraws the app's pending review; whether there was one. */
export async function withdrawReview(env: DbEnv, clientId: string, by: string): Promise<boolean> {
  const r = await env.DB.prepare(
    `UPDATE app_reviews SET state = 'withdrawn', decided_by = ?, decided_at = ? WHERE client_id = ? AND state = 'pending'`,
  )
    .bind(by, Date.now(), clientId)
    .run();
  return r.meta.changes > 0;
}
