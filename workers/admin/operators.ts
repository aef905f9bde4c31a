// /admin/operators and /admin/tokens (docs/operations.md "Operators and roles"): who may run the
// service. A grant is an invitation bound to a number for 7 days, taken by the person who next signs
// in to /console with it; from then on the role is that person's. An API token serves automation,
// shown once and stored as its hash. Every change is audited with who made it.

import { ApiError, E } from "../core/errors";
import { json } from "../core/http";
import { MOBILE_NUMBER } from "../core/spec";
import type { RequestContext } from "../core/router";
import { personAtNumber } from "../provider/store/directory/index";
import {
  createToken,
  dropInvite,
  inviteKey,
  revokeOperatorRole,
  isRole,
  listOperators,
  listTokens,
  putInvite,
  revokeToken,
  ROLES,
  TOKEN_NAME,
  type Role,
} from "../provider/store/operators";
import { actorOf, auditBy } from "./access";
import { adminConfig, type AdminEnv } from "./config";
import { onlyFields, readJsonObject } from "./steps";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function roleOf(body: Record<string, unknown>): Role {
  if (body.role === undefined) throw E.missing("role");
  if (!isRole(body.role)) throw E.invalidBecause("role", `must be one of ${ROLES.join(", ")}`);
  return body.role;
}

function phoneOf(v: unknown): string {
  if (v === undefined) throw E.missing("phone");
  if (typeof v !== "string" || !MOBILE_NUMBER.test(v))
    throw E.invalidBecause("phone", "must be a mobile number of 11 digits (01012345678)");
  return v;
}

/** `POST /admin/operators` `{phone, role}`: invites the number's holder to take `role`. */
export async function grantOperator(req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const cfg = adminConfig(env);
  const body = await readJsonObject(req, cfg.maxBodyBytes);
  onlyFields(body, ["phone", "role"]);
  const phone = phoneOf(body.phone);
  const role = roleOf(body);
  const holder = await personAtNumber(env, phone);
  if (holder && holder.test_otp_hash !== null)
    throw E.invalidBecause("phone", "a fixed-code test number can never hold a role");
  const actor = actorOf(rc).id;
  const invite = await putInvite(env, {
    phoneKey: await inviteKey(cfg.sealKey, phone),
    role,
    masked: `${phone.slice(0, 3)}-${"*".repeat(phone.length - 7)}-${phone.slice(-4)}`,
    grantedBy: actor,
  });
  rc.log.event = "operator.granted";
  await auditBy(env, rc, "operator.granted", null, "ok", { role });
  return json(
    { masked: invite.masked, role, granted_by: actor, expires_at: iso(invite.expiresAt), status: "invited" },
    201,
  );
}

/** `GET /admin/operators`: operators (by opaque id, masked number) and open invitations. */
export async function listAllOperators(_req: Request, env: AdminEnv): Promise<Response> {
  const { operators, invites } = await listOperators(env);
  return json({
    operators: operators.map((o) => ({
      id: o.id,
      role: o.role,
      masked: o.masked,
      granted_by: o.grantedBy,
      taken_at: iso(o.takenAt),
      last_seen_at: iso(o.lastSeenAt),
    })),
    invites: invites.map((i) => ({
      masked: i.masked,
      role: i.role,
      granted_by: i.grantedBy,
      created_at: iso(i.createdAt),
      expires_at: iso(i.expiresAt),
    })),
  });
}

/** `DELETE /admin/operators/:id`: ends an operator's role. */
export async function revokeOperator(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const id = rc.params.id!;
  if (!/^op_[A-Za-z0-9_-]{16}$/.test(id)) throw E.noSuch("operator");
  const ended = await revokeOperatorRole(env, id);
  if (!ended) throw E.noSuch("operator");
  if (ended === "last_admin")
    throw E.invalidBecause("operator", "the last admin: grant another admin first, so the console keeps one");
  const actor = actorOf(rc).id;
  await auditBy(env, rc, "operator.revoked", null, "ok", { operator: id, role: ended.role });
  return json({ id, revoked: true });
}

/** `DELETE /admin/operators/invites/:phone`: withdraws a number's open invitation. */
export async function withdrawInvite(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const phone = phoneOf(rc.params.phone);
  if (!(await dropInvite(env, await inviteKey(adminConfig(env).sealKey, phone)))) throw E.noSuch("invitation");
  await auditBy(env, rc, "operator.invite_withdrawn", null, "ok");
  return json({ withdrawn: true });
}

/** `POST /admin/tokens` `{name, role}`: a named API token, its secret shown once. */
export async function createApiToken(req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const body = await readJsonObject(req, adminConfig(env).maxBodyBytes);
  onlyFields(body, ["name", "role"]);
  if (body.name === undefined) throw E.missing("name");
  if (typeof body.name !== "string" || !TOKEN_NAME.test(body.name))
    throw E.invalidBecause("name", "must be 1-32 lowercase letters, digits or -, starting with a letter or digit");
  const role = roleOf(body);
  const actor = actorOf(rc).id;
  const made = await createToken(env, body.name, role, actor);
  if (!made)
    throw new ApiError("invalid_request", "A token of that name exists: revoke it first, or choose another name.", {
      status: 409,
    });
  await auditBy(env, rc, "token.created", null, "ok", { token: made.token.name, role });
  return json(
    {
      name: made.token.name,
      role,
      token: made.secret,
      created_by: actor,
      created_at: iso(made.token.createdAt),
    },
    201,
  );
}

/** `GET /admin/tokens`: every token without its secret, with its last use. */
export async function listApiTokens(_req: Request, env: AdminEnv): Promise<Response> {
  const tokens = await listTokens(env);
  return json({
    tokens: tokens.map((t) => ({
      name: t.name,
      role: t.role,
      created_by: t.createdBy,
      created_at: iso(t.createdAt),
      last_used_at: iso(t.lastUsedAt),
    })),
  });
}

/** `DELETE /admin/tokens/:name`: revokes a token (every isolate within CLIENT_CACHE_SECONDS). */
export async function revokeApiToken(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const name = rc.params.name!;
  if (!TOKEN_NAME.test(name) || !(await revokeToken(env, name))) throw E.noSuch("token");
  await auditBy(env, rc, "token.revoked", null, "ok", { token: name });
  return json({ name, revoked: true });
}
