// /admin/operators and /admin/tokens (docs/operations.md "Operators and roles"): who may run the
// service. A grant is an invitation bound to a number for 7 days, taken by the person who next signs
// in to /console with it; from then on the role is that person's. An API token serves automation,
// shown once and stored as its hash. Every change is audited with who made it.

import { ApiError, E } from "../core/errors";
import { MOBILE_NUMBER } from "../core/spec";
import { subscriberRowAtNumber } from "../provider/store/directory/index";
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
import { auditBy, service } from "./access";
import { adminConfig } from "./config";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function roleOf(role: unknown): Role {
  if (role === undefined) throw E.missing("role");
  if (!isRole(role)) throw E.invalidBecause("role", `must be one of ${ROLES.join(", ")}`);
  return role;
}

function phoneOf(v: unknown): string {
  if (v === undefined) throw E.missing("phone");
  if (typeof v !== "string" || !MOBILE_NUMBER.test(v))
    throw E.invalidBecause("phone", "must be a mobile number of 11 digits (01012345678)");
  return v;
}

/** An invitation to a role, as the API answers it. */
export interface InviteView {
  masked: string;
  role: Role;
  granted_by: string;
  expires_at: string | null;
}

/** `POST /admin/operators` `{phone, role}`: invites the number's holder to take `role`. */
export const grantOperator = service<{ phone: unknown; role: unknown }, InviteView & { status: "invited" }>(
  "admin",
  "POST",
  async (env, caller, input) => {
    const cfg = adminConfig(env);
    const phone = phoneOf(input.phone);
    const role = roleOf(input.role);
    const holder = await subscriberRowAtNumber(env, phone);
    if (holder && holder.test_otp_hash !== null)
      throw E.invalidBecause("phone", "a fixed-code test number can never hold a role");
    const actor = caller.actor.id;
    const invite = await putInvite(env, {
      phoneKey: await inviteKey(cfg.sealKey, phone),
      role,
      masked: `${phone.slice(0, 3)}-${"*".repeat(phone.length - 7)}-${phone.slice(-4)}`,
      grantedBy: actor,
    });
    caller.rc.log.event = "operator.granted";
    await auditBy(env, caller, "operator.granted", null, "ok", { role });
    return { masked: invite.masked, role, granted_by: actor, expires_at: iso(invite.expiresAt), status: "invited" };
  },
);

/** `GET /admin/operators`: operators (by opaque id, masked number) and open invitations. */
export const listAllOperators = service<
  void,
  {
    operators: {
      id: string;
      role: Role;
      masked: string;
      granted_by: string;
      taken_at: string | null;
      last_seen_at: string | null;
    }[];
    invites: (InviteView & { created_at: string | null })[];
  }
>("admin", "GET", async (env) => {
  const { operators, invites } = await listOperators(env);
  return {
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
  };
});

/** `DELETE /admin/operators/:id`: ends an operator's role. */
export const revokeOperator = service<{ id: string }, { id: string; revoked: true }>(
  "admin",
  "DELETE",
  async (env, caller, { id }) => {
    if (!/^op_[A-Za-z0-9_-]{16}$/.test(id)) throw E.noSuch("operator");
    const ended = await revokeOperatorRole(env, id);
    if (!ended) throw E.noSuch("operator");
    if (ended === "last_admin")
      throw E.invalidBecause("operator", "the last admin: grant another admin first, so the console keeps one");
    await auditBy(env, caller, "operator.revoked", null, "ok", { operator: id, role: ended.role });
    return { id, revoked: true };
  },
);

/** `DELETE /admin/operators/invites/:phone`: withdraws a number's open invitation. */
export const withdrawInvite = service<{ phone: unknown }, { withdrawn: true }>(
  "admin",
  "DELETE",
  async (env, caller, input) => {
    const phone = phoneOf(input.phone);
    if (!(await dropInvite(env, await inviteKey(adminConfig(env).sealKey, phone)))) throw E.noSuch("invitation");
    await auditBy(env, caller, "operator.invite_withdrawn", null, "ok");
    return { withdrawn: true };
  },
);

/** `POST /admin/tokens` `{name, role}`: a named API token, its secret shown once. */
export const createApiToken = service<
  { name: unknown; role: unknown },
  { name: string; role: Role; token: string; created_by: string; created_at: string | null }
>("admin", "POST", async (env, caller, input) => {
  if (input.name === undefined) throw E.missing("name");
  if (typeof input.name !== "string" || !TOKEN_NAME.test(input.name))
    throw E.invalidBecause("name", "must be 1-32 lowercase letters, digits or -, starting with a letter or digit");
  const role = roleOf(input.role);
  const actor = caller.actor.id;
  const made = await createToken(env, input.name, role, actor);
  if (!made)
    throw new ApiError("invalid_request", "A token of that name exists: revoke it first, or choose another name.", {
      status: 409,
    });
  await auditBy(env, caller, "token.created", null, "ok", { token: made.token.name, role });
  return {
    name: made.token.name,
    role,
    token: made.secret,
    created_by: actor,
    created_at: iso(made.token.createdAt),
  };
});

/** `GET /admin/tokens`: every token without its secret, with its last use. */
export const listApiTokens = service<
  void,
  {
    tokens: { name: string; role: Role; created_by: string; created_at: string | null; last_used_at: string | null }[];
  }
>("admin", "GET", async (env) => {
  const tokens = await listTokens(env);
  return {
    tokens: tokens.map((t) => ({
      name: t.name,
      role: t.role,
      created_by: t.createdBy,
      created_at: iso(t.createdAt),
      last_used_at: iso(t.lastUsedAt),
    })),
  };
});

/** `DELETE /admin/tokens/:name`: revokes a token (every isolate within CLIENT_CACHE_SECONDS). */
export const revokeApiToken = service<{ name: string }, { name: string; revoked: true }>(
  "admin",
  "DELETE",
  async (env, caller, { name }) => {
    if (!TOKEN_NAME.test(name) || !(await revokeToken(env, name))) throw E.noSuch("token");
    await auditBy(env, caller, "token.revoked", null, "ok", { token: name });
    return { name, revoked: true };
  },
);
