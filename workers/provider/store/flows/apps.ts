// What spans an app's D1 tables: its registration (`clients`, clients.ts), with its owner for a
// developer's (`app_members`, developers.ts), or its review (`app_reviews`, reviews.ts), written in
// one D1 transaction (a batch), each statement its table's module's.

import { randomAlphanumeric } from "../../../core/crypto";
import { E } from "../../../core/errors";
import {
  approvedClientStatement,
  getClient,
  insertClient,
  insertClientStatement,
  sealSecret,
  type NewClient,
} from "../clients";
import { ownedAppsBelow, ownerStatement, type DeveloperPerson } from "../developers";
import { decisionStatement, reviewById, toReview, type Review, type ReviewRow } from "../reviews";

type DbEnv = { DB: D1Database };

/** reference behaviour: client ids are 20 mixed-case alphanumerics, secrets 64 characters. */
const CLIENT_ID_LENGTH = 20;
const CLIENT_SECRET_LENGTH = 64;

/**
 * Registers an app, the one way every door does (the admin API, the operations console, the
 * developer console): a drawn client id and secret, the secret stored only sealed and answered
 * here once. A developer's app starts testing with them as its owner, unless they own `maxApps`
 * already ("cap"). An id drawn before is drawn again, at most three times.
 */
export async function registerClient(
  env: DbEnv & { SEAL_KEY: string },
  fields: Omit<NewClient, "clientId" | "secretSealed" | "stage">,
  owner?: { person: DeveloperPerson; maxApps: number },
): Promise<{ clientId: string; secret: string } | "cap"> {
  const secret = randomAlphanumeric(CLIENT_SECRET_LENGTH);
  for (let attempt = 0; attempt < 3; attempt++) {
    const clientId = randomAlphanumeric(CLIENT_ID_LENGTH);
    const c = { clientId, secretSealed: await sealSecret(env, clientId, secret), ...fields };
    if (!owner) {
      if (await insertClient(env, c)) return { clientId, secret };
      continue;
    }
    const made = await createDeveloperApp(env, c, owner.person, owner.maxApps);
    if (made === "cap") return "cap";
    if (made === "created") return { clientId, secret };
  }
  throw E.server("three client id collisions in a row");
}

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
