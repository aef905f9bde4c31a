// What spans a developer's app's D1 tables: the app (`clients`, clients.ts) with its owner
// (`app_members`, developers.ts) or its review (`app_reviews`, reviews.ts), written in one D1
// transaction (a batch), each statement its table's module's.

import { approvedClientStatement, getClient, insertClientStatement, type NewClient } from "../clients";
import { ownedAppsBelow, ownerStatement, type DeveloperPerson } from "../developers";
import { decisionStatement, reviewById, toReview, type Review, type ReviewRow } from "../reviews";

type DbEnv = { DB: D1Database };

/**
 * Registers a developer's app in the testing stage with its owner, in one transaction that counts
 * the apps they own: "created", "cap" (they own `maxApps` already) or "taken" (the client id was
 * drawn before: the caller draws another).
 */
export async function createDeveloperApp(
  env: DbEnv,
  c: NewClient,
  owner: DeveloperPerson,
  maxApps: number,
): Promise<"created" | "cap" | "taken"> {
  const now = Date.now();
  const [app, member] = await env.DB.batch([
    insertClientStatement(env, { ...c, stage: "testing" }, now, ownedAppsBelow(owner.subscriberId, maxApps)),
    // the owner only with the row the statement before wrote
    ownerStatement(env, c.clientId, owner, now),
  ]);
  if (app!.meta.changes === 1 && member!.meta.changes === 1) return "created";
  return (await getClient(env, c.clientId)) ? "taken" : "cap";
}

/**
 * Decides a pending review, once: approved, what it proposed becomes the app's and the app is live,
 * in the same transaction. The review as decided, or null when it was not pending (decided before,
 * withdrawn, unknown).
 */
export async function decideReview(
  env: DbEnv,
  id: string,
  decision: "approved" | "rejected",
  by: string,
  reason: string | null,
): Promise<Review | null> {
  const now = Date.now();
  const decide = decisionStatement(env, id, decision, by, reason, now);
  if (decision === "rejected") {
    const r = await decide.first<ReviewRow>();
    return r && toReview(r);
  }
  const pending = await reviewById(env, id);
  if (!pending || pending.state !== "pending") return null;
  const [decided] = await env.DB.batch<ReviewRow>([
    decide,
    // only when the statement before decided it (changes(): the same transaction's last write)
    approvedClientStatement(env, pending.clientId, pending.proposed, now),
  ]);
  const row = decided!.results[0];
  return row ? toReview(row) : null;
}
