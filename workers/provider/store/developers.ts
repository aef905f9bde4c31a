// Developers' apps in D1 (docs/developers.md): an app's team (`app_members`), invitations to it
// (`app_invites`), the test numbers the service allocated to it (`app_test_numbers`). Every
// statement on them is here. No number and no name is stored for a person: a member is the person's
// directory id (a membership is the person's, as links and operator roles are) with a keyed hash of
// the number they proved (SEAL_KEY), which is what the testing stage compares a typed number with
// before anyone is looked up.
//
// Invariants:
// - an app a developer made has exactly one owner at its creation, and a developer owns at most
//   DEVELOPER_MAX_APPS apps: the app and its owner are written in one transaction that counts them
//   (`ownedAppsBelow`, `ownerStatement`; the transaction is flows/apps.ts's);
// - an app with an owner always keeps one: the last owner cannot leave or be demoted;
// - an invitation is taken once, by the person who proves its number, while it is live.

import { derivedToken } from "../../core/crypto";

type DbEnv = { DB: D1Database };

export const TEAM_ROLES = ["owner", "member"] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];
export const isTeamRole = (v: unknown): v is TeamRole => v === "owner" || v === "member";

/** How long an invitation waits for its number's person. */
export const TEAM_INVITE_MS = 7 * 86_400_000;

/** The key a member's or invitee's number is found by: a keyed hash, so D1 never holds the number. */
export function memberKey(sealKey: string, phone: string): Promise<string> {
  return derivedToken(sealKey, "developer-member", phone);
}

/** A person's opaque developer id (the audit's `developer:<id>`), derived from their directory id. */
export async function developerId(sealKey: string, subscriberId: number): Promise<string> {
  return `dv_${(await derivedToken(sealKey, "developer-id", String(subscriberId))).slice(0, 16)}`;
}

export interface Member {
  clientId: string;
  subscriberId: number;
  role: TeamRole;
  masked: string;
  developer: string;
  addedBy: string;
  addedAt: number;
}

export interface TeamInvite {
  clientId: string;
  phoneKey: string;
  role: TeamRole;
  masked: string;
  invitedBy: string;
  createdAt: number;
  expiresAt: number;
}

type MemberRow = {
  client_id: string;
  subscriber_id: number;
  role: TeamRole;
  phone_key: string;
  masked: string;
  developer: string;
  added_by: string;
  added_at: number;
};
type InviteRow = {
  client_id: string;
  phone_key: string;
  role: TeamRole;
  masked: string;
  invited_by: string;
  created_at: number;
  expires_at: number;
};

const toMember = (r: MemberRow): Member => ({
  clientId: r.client_id,
  subscriberId: r.subscriber_id,
  role: r.role,
  masked: r.masked,
  developer: r.developer,
  addedBy: r.added_by,
  addedAt: r.added_at,
});
const toInvite = (r: InviteRow): TeamInvite => ({
  clientId: r.client_id,
  phoneKey: r.phone_key,
  role: r.role,
  masked: r.masked,
  invitedBy: r.invited_by,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});

/** Who a developer is: the person of a proven number. */
export interface DeveloperPerson {
  subscriberId: number;
  phoneKey: string;
  masked: string;
  developer: string;
}

/**
 * The condition of an app's creation: its owner owns fewer than `maxApps` apps (`sql` is an SQL
 * expression, `bind` its values).
 */
export function ownedAppsBelow(subscriberId: number, maxApps: number): { sql: string; bind: unknown[] } {
  return {
    sql: "(SELECT COUNT(*) FROM app_members WHERE subscriber_id = ? AND role = 'owner') < ?",
    bind: [subscriberId, maxApps],
  };
}

/**
 * The owner of a new app, written only with the row the statement before it in the same batch
 * wrote (changes(): the same transaction's last write).
 */
export function ownerStatement(env: DbEnv, clientId: string, owner: DeveloperPerson, now: number): D1PreparedStatement {
  return env.DB.prepare(
    `INSERT INTO app_members (client_id, subscriber_id, role, phone_key, masked, developer, added_by, added_at)
     SELECT ?, ?, 'owner', ?, ?, ?, ?, ? WHERE changes() = 1`,
  ).bind(
    clientId,
    owner.subscriberId,
    owner.phoneKey,
    owner.masked,
    owner.developer,
    `developer:${owner.developer}`,
    now,
  );
}

/** The apps a person is on the team of, with their role, oldest first. */
export async function teamsOf(env: DbEnv, subscriberId: number): Promise<{ clientId: string; role: TeamRole }[]> {
  const { results } = await env.DB.prepare(
    "SELECT client_id, role FROM app_members WHERE subscriber_id = ? ORDER BY added_at, client_id",
  )
    .bind(subscriberId)
    .all<{ client_id: string; role: TeamRole }>();
  return results.map((r) => ({ clientId: r.client_id, role: r.role }));
}

/** The person's role on the app's team, or null. */
export async function roleOn(env: DbEnv, clientId: string, subscriberId: number): Promise<TeamRole | null> {
  const r = await env.DB.prepare("SELECT role FROM app_members WHERE client_id = ? AND subscriber_id = ?")
    .bind(clientId, subscriberId)
    .first<{ role: TeamRole }>();
  return r?.role ?? null;
}

/**
 * Whether a typed number may sign in to a testing app, decided from the number alone: a team
 * member's number (by its keyed hash), or one of the app's unexpired test numbers.
 */
export async function admitsNumber(env: DbEnv, clientId: string, phoneKey: string, phone: string): Promise<boolean> {
  const r = await env.DB.prepare(
    `SELECT EXISTS (SELECT 1 FROM app_members WHERE client_id = ? AND phone_key = ?)
         OR EXISTS (SELECT 1 FROM app_test_numbers WHERE client_id = ? AND phone = ? AND expires_at > ?) AS ok`,
  )
    .bind(clientId, phoneKey, clientId, phone, Date.now())
    .first<{ ok: number }>();
  return r?.ok === 1;
}

/** The app's team and its live invitations (expired ones are dropped first). */
export async function teamOf(env: DbEnv, clientId: string): Promise<{ members: Member[]; invites: TeamInvite[] }> {
  const [, members, invites] = await env.DB.batch([
    env.DB.prepare("DELETE FROM app_invites WHERE client_id = ? AND expires_at <= ?").bind(clientId, Date.now()),
    env.DB.prepare("SELECT * FROM app_members WHERE client_id = ? ORDER BY added_at, subscriber_id").bind(clientId),
    env.DB.prepare("SELECT * FROM app_invites WHERE client_id = ? ORDER BY created_at, phone_key").bind(clientId),
  ]);
  return {
    members: (members!.results as MemberRow[]).map(toMember),
    invites: (invites!.results as InviteRow[]).map(toInvite),
  };
}

/** Opens (or replaces) the invitation of a number to the app's team, valid TEAM_INVITE_MS. */
export async function putTeamInvite(
  env: DbEnv,
  invite: Omit<TeamInvite, "createdAt" | "expiresAt">,
): Promise<TeamInvite> {
  const now = Date.now();
  const full: TeamInvite = { ...invite, createdAt: now, expiresAt: now + TEAM_INVITE_MS };
  await env.DB.prepare(
    `INSERT INTO app_invites (client_id, phone_key, role, masked, invited_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (client_id, phone_key) DO UPDATE SET role = excluded.role, masked = excluded.masked,
       invited_by = excluded.invited_by, created_at = excluded.created_at, expires_at = excluded.expires_at`,
  )
    .bind(full.clientId, full.phoneKey, full.role, full.masked, full.invitedBy, full.createdAt, full.expiresAt)
    .run();
  return full;
}

/** Withdraws an invitation; whether there was one. */
export async function dropTeamInvite(env: DbEnv, clientId: string, phoneKey: string): Promise<boolean> {
  const r = await env.DB.prepare("DELETE FROM app_invites WHERE client_id = ? AND phone_key = ?")
    .bind(clientId, phoneKey)
    .run();
  return r.meta.changes > 0;
}

/** The live invitations of a number (its keyed hash), across apps. */
export async function invitesFor(env: DbEnv, phoneKey: string): Promise<TeamInvite[]> {
  const { results } = await env.DB.prepare(
    "SELECT * FROM app_invites WHERE phone_key = ? AND expires_at > ? ORDER BY created_at, client_id",
  )
    .bind(phoneKey, Date.now())
    .all<InviteRow>();
  return results.map(toInvite);
}

/**
 * The person who proved the invited number joins the team with the invitation's role, in one step:
 * the invitation goes and the membership is written (a member already keeps the higher of the two
 * roles). Null when no live invitation of the number names the app (none, taken, or expired).
 */
export async function acceptTeamInvite(env: DbEnv, clientId: string, p: DeveloperPerson): Promise<Member | null> {
  const now = Date.now();
  const [written] = await env.DB.batch<MemberRow>([
    env.DB.prepare(
      `INSERT INTO app_members (client_id, subscriber_id, role, phone_key, masked, developer, added_by, added_at)
       SELECT client_id, ?, role, ?, ?, ?, invited_by, ? FROM app_invites
        WHERE client_id = ? AND phone_key = ? AND expires_at > ?
       ON CONFLICT (client_id, subscriber_id) DO UPDATE SET
         role = CASE WHEN app_members.role = 'owner' THEN 'owner' ELSE excluded.role END,
         phone_key = excluded.phone_key, masked = excluded.masked
       RETURNING *`,
    ).bind(p.subscriberId, p.phoneKey, p.masked, p.developer, now, clientId, p.phoneKey, now),
    // only a live one goes: an expired invitation stays until its team is listed
    env.DB.prepare("DELETE FROM app_invites WHERE client_id = ? AND phone_key = ? AND expires_at > ?").bind(
      clientId,
      p.phoneKey,
      now,
    ),
  ]);
  const row = written!.results[0];
  return row ? toMember(row) : null;
}

/** The person declines a live invitation of their number; whether there was one. */
export async function declineTeamInvite(env: DbEnv, clientId: string, phoneKey: string): Promise<boolean> {
  const r = await env.DB.prepare("DELETE FROM app_invites WHERE client_id = ? AND phone_key = ? AND expires_at > ?")
    .bind(clientId, phoneKey, Date.now())
    .run();
  return r.meta.changes > 0;
}

/**
 * Ends a membership, unless it is the app's last owner: "removed", "last_owner", or "none" (no such
 * member). One statement: two owners leaving at once cannot both pass the count.
 */
export async function removeMember(
  env: DbEnv,
  clientId: string,
  subscriberId: number,
): Promise<"removed" | "last_owner" | "none"> {
  const r = await env.DB.prepare(
    `DELETE FROM app_members WHERE client_id = ? AND subscriber_id = ?
       AND (role <> 'owner' OR (SELECT COUNT(*) FROM app_members WHERE client_id = ? AND role = 'owner') > 1)`,
  )
    .bind(clientId, subscriberId, clientId)
    .run();
  if (r.meta.changes > 0) return "removed";
  return (await roleOn(env, clientId, subscriberId)) ? "last_owner" : "none";
}

/** Changes a member's role, unless it demotes the app's last owner (as `removeMember`). */
export async function setMemberRole(
  env: DbEnv,
  clientId: string,
  subscriberId: number,
  role: TeamRole,
): Promise<"changed" | "last_owner" | "none"> {
  const r = await env.DB.prepare(
    `UPDATE app_members SET role = ? WHERE client_id = ? AND subscriber_id = ?
       AND (? = 'owner' OR role <> 'owner' OR (SELECT COUNT(*) FROM app_members WHERE client_id = ? AND role = 'owner') > 1)`,
  )
    .bind(role, clientId, subscriberId, role, clientId)
    .run();
  if (r.meta.changes > 0) return "changed";
  return (await roleOn(env, clientId, subscriberId)) ? "last_owner" : "none";
}

/**
 * Ends every membership of a person who left the directory (their number passed to another person):
 * the apps whose team they were on. An app left with no owner is then the operators' (an editor
 * assigns one in /console).
 */
export async function endMembershipsOf(env: DbEnv, subscriberId: number): Promise<string[]> {
  const { results } = await env.DB.prepare("DELETE FROM app_members WHERE subscriber_id = ? RETURNING client_id")
    .bind(subscriberId)
    .all<{ client_id: string }>();
  return results.map((r) => r.client_id);
}

/** How many owners the app has (0: the operators'; an editor invites one). */
export async function ownerCount(env: DbEnv, clientId: string): Promise<number> {
  const r = await env.DB.prepare("SELECT COUNT(*) AS n FROM app_members WHERE client_id = ? AND role = 'owner'")
    .bind(clientId)
    .first<{ n: number }>();
  return r?.n ?? 0;
}

// ---------------------------------------------------------------- test numbers

export interface AppTestNumber {
  phone: string;
  clientId: string;
  createdBy: string;
  createdAt: number;
  expiresAt: number;
}

type TestNumberRow = { phone: string; client_id: string; created_by: string; created_at: number; expires_at: number };
const toTestNumber = (r: TestNumberRow): AppTestNumber => ({
  phone: r.phone,
  clientId: r.client_id,
  createdBy: r.created_by,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});

/** Claims `phone` for the app; false when another app holds it already. */
export async function claimTestNumber(env: DbEnv, n: AppTestNumber): Promise<boolean> {
  const r = await env.DB.prepare(
    `INSERT INTO app_test_numbers (phone, client_id, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (phone) DO NOTHING`,
  )
    .bind(n.phone, n.clientId, n.createdBy, n.createdAt, n.expiresAt)
    .run();
  return r.meta.changes === 1;
}

/** Moves a test number's expiry (a renewal); false when the app holds no such number. */
export async function renewTestNumberRow(env: DbEnv, clientId: string, phone: string, expiresAt: number) {
  const r = await env.DB.prepare("UPDATE app_test_numbers SET expires_at = ? WHERE client_id = ? AND phone = ?")
    .bind(expiresAt, clientId, phone)
    .run();
  return r.meta.changes > 0;
}

/** Releases a test number; false when the app holds no such number. */
export async function releaseTestNumber(env: DbEnv, clientId: string, phone: string): Promise<boolean> {
  const r = await env.DB.prepare("DELETE FROM app_test_numbers WHERE client_id = ? AND phone = ?")
    .bind(clientId, phone)
    .run();
  return r.meta.changes > 0;
}

/** The app's test numbers, oldest first. */
export async function testNumbersOf(env: DbEnv, clientId: string): Promise<AppTestNumber[]> {
  const { results } = await env.DB.prepare(
    "SELECT * FROM app_test_numbers WHERE client_id = ? ORDER BY created_at, phone",
  )
    .bind(clientId)
    .all<TestNumberRow>();
  return results.map(toTestNumber);
}

// ---------------------------------------------------------------- notices to owners

export type NoticeKind = "redirect_uris" | "secret_rotated" | "review_approved" | "review_rejected" | "events_paused";

export interface DeveloperNotice {
  clientId: string;
  kind: NoticeKind;
  actor: string;
  createdAt: number;
}

/** Tells the app's owners (but `except`, the one who acted) on their next visit. */
export async function noticeOwners(
  env: DbEnv,
  clientId: string,
  kind: NoticeKind,
  actor: string,
  except: number | null,
): Promise<void> {
  await env.DB.prepare(
    `INSERT INTO developer_notices (subscriber_id, client_id, kind, actor, created_at)
     SELECT subscriber_id, client_id, ?, ?, ? FROM app_members WHERE client_id = ? AND role = 'owner' AND subscriber_id <> ?`,
  )
    .bind(kind, actor, Date.now(), clientId, except ?? -1)
    .run();
}

/** The person's notices, taken: each is shown once. */
export async function takeNotices(env: DbEnv, subscriberId: number): Promise<DeveloperNotice[]> {
  const { results } = await env.DB.prepare(
    "DELETE FROM developer_notices WHERE subscriber_id = ? RETURNING client_id, kind, actor, created_at",
  )
    .bind(subscriberId)
    .all<{ client_id: string; kind: NoticeKind; actor: string; created_at: number }>();
  return results
    .map((r) => ({ clientId: r.client_id, kind: r.kind, actor: r.actor, createdAt: r.created_at }))
    .sort((a, b) => a.createdAt - b.createdAt);
}
