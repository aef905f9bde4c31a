// /admin/clients: register, read, list, update, rotate the secret, disable/enable, delete
// (docs/operations.md "Admin API"). Every change is audited and dropped from this
// isolate's client cache; other isolates follow within CLIENT_CACHE_SECONDS.

import { auditBy } from "./access";
import { adminConfig, MAX_ROTATION_GRACE_SECONDS } from "./config";
import type { AdminEnv } from "./config";
import { randomAlphanumeric } from "../core/crypto";
import { commonConfig } from "../core/config";
import { E } from "../core/errors";
import { json } from "../core/http";
import type { RequestContext } from "../core/router";
import { onlyFields, readJsonObject } from "./steps";
import { CLIENT_FIELDS, clientPatch, newClientFields } from "./validate";
import { eventsUriProblem } from "../provider/store/hosts";
import {
  forgetClient,
  getClient,
  insertClient,
  listClients,
  rotateClientSecret,
  sealSecret,
  updateClient,
  type AdminClient,
} from "../provider/store/clients";
import { deleteClient } from "../provider/store/flows/delete-client";

/** reference behaviour: client ids are 20 mixed-case alphanumerics, secrets 64 characters. */
const CLIENT_ID_LENGTH = 20;
const CLIENT_SECRET_LENGTH = 64;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
/** An app's own SMS budget as the audit detail holds it: the number, or `default` (SMS_APP_DAILY_BUDGET). */
const budgetDetail = (b: number | null): number | string => b ?? "default";

/**
 * The wire form of a client (snake_case, ISO times); never a secret. `events_uri_problem`: why its
 * `events_uri` would be refused now (registered before the rule, workers/provider/store/hosts.ts), else null;
 * the address keeps receiving events until it is changed.
 */
export function clientView(c: AdminClient, devMode: boolean): Record<string, unknown> {
  return {
    client_id: c.clientId,
    name: c.name,
    redirect_uris: c.redirectUris,
    items: c.items,
    auto_login: c.autoLogin,
    oidc: c.oidc,
    events_uri: c.eventsUri,
    events_uri_problem: c.eventsUri === null ? null : eventsUriProblem(c.eventsUri, devMode),
    event_types: c.eventTypes,
    purpose: c.purpose,
    retention: c.retention,
    sms_daily_budget: c.smsDailyBudget,
    status: c.status,
    stage: c.stage,
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
    previous_secret_valid_until: iso(c.previousSecretUntil),
    events_paused_since: iso(c.eventsPausedAt),
  };
}

/** The client the path names; logged only once it is one (a number or a name typed there stays out of the log). */
async function existing(env: AdminEnv, rc: RequestContext): Promise<AdminClient> {
  const c = await getClient(env, rc.params.id!);
  if (!c) throw E.noSuch("client");
  rc.log.clientId = c.clientId;
  return c;
}

/** Re-reads the client after a change, drops it from the cache and answers its view. */
async function changed(
  env: AdminEnv,
  clientId: string,
  extra: Record<string, unknown> = {},
  status = 200,
): Promise<Response> {
  forgetClient(clientId);
  const c = await getClient(env, clientId);
  if (!c) throw E.noSuch("client");
  return json({ ...clientView(c, commonConfig(env).devMode), ...extra }, status);
}

export async function list(_req: Request, env: AdminEnv): Promise<Response> {
  const devMode = commonConfig(env).devMode;
  return json({ clients: (await listClients(env)).map((c) => clientView(c, devMode)) });
}

export async function read(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  return json(clientView(await existing(env, rc), commonConfig(env).devMode));
}

export async function create(req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const cfg = adminConfig(env);
  const body = await readJsonObject(req, cfg.maxBodyBytes);
  onlyFields(body, CLIENT_FIELDS);
  const fields = newClientFields(body, commonConfig(env).devMode);
  const secret = randomAlphanumeric(CLIENT_SECRET_LENGTH);
  for (let attempt = 0; attempt < 3; attempt++) {
    const clientId = randomAlphanumeric(CLIENT_ID_LENGTH);
    const secretSealed = await sealSecret(env, clientId, secret);
    if (await insertClient(env, { clientId, secretSealed, ...fields })) {
      rc.log.clientId = clientId;
      await auditBy(env, rc, "client.created", clientId, "ok", {
        items: fields.items.join(","),
        auto_login: fields.autoLogin,
        oidc: fields.oidc,
        event_types: fields.eventTypes.join(","),
        sms_daily_budget: budgetDetail(fields.smsDailyBudget),
      });
      // The secret is shown here once; it is stored only sealed.
      return changed(env, clientId, { client_secret: secret }, 201);
    }
  }
  throw E.server("three client id collisions in a row");
}

export async function update(req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const cfg = adminConfig(env);
  const body = await readJsonObject(req, cfg.maxBodyBytes);
  onlyFields(body, CLIENT_FIELDS);
  const patch = clientPatch(body, commonConfig(env).devMode);
  const c = await existing(env, rc);
  if (!(await updateClient(env, c.clientId, patch))) throw E.noSuch("client");
  await auditBy(env, rc, "client.updated", c.clientId, "ok", {
    fields: Object.keys(body).sort().join(","),
    // what an app may send is money and sign-ins: the trail keeps the value, not only that it changed
    ...(patch.smsDailyBudget !== undefined ? { sms_daily_budget: budgetDetail(patch.smsDailyBudget) } : {}),
  });
  return changed(env, c.clientId);
}

function graceSeconds(body: Record<string, unknown>, dflt: number): number {
  const g = body.grace_seconds;
  if (g === undefined) return dflt;
  if (typeof g !== "number" || !Number.isInteger(g) || g < 0 || g > MAX_ROTATION_GRACE_SECONDS) {
    throw E.invalidBecause("grace_seconds", `must be a whole number from 0 to ${MAX_ROTATION_GRACE_SECONDS}`);
  }
  return g;
}

/**
 * A new secret, shown once. The old one keeps working for the grace period (apps redeploy with the
 * new one meanwhile; tokens issued under the old one are encrypted with it, spec §2.2); a grace
 * of 0 ends it at once (a leaked secret).
 */
export async function rotate(req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const cfg = adminConfig(env);
  const body = await readJsonObject(req, cfg.maxBodyBytes);
  onlyFields(body, ["grace_seconds"]);
  const grace = graceSeconds(body, cfg.rotationGraceSeconds);
  const c = await existing(env, rc);
  const secret = randomAlphanumeric(CLIENT_SECRET_LENGTH);
  const until = grace > 0 ? Date.now() + grace * 1000 : null;
  if (!(await rotateClientSecret(env, c.clientId, await sealSecret(env, c.clientId, secret), until)))
    throw E.noSuch("client");
  await auditBy(env, rc, "client.secret_rotated", c.clientId, "ok", { grace_seconds: grace });
  return changed(env, c.clientId, { client_secret: secret });
}

async function setStatus(env: AdminEnv, rc: RequestContext, status: "active" | "disabled"): Promise<Response> {
  const c = await existing(env, rc);
  if (!(await updateClient(env, c.clientId, { status }))) throw E.noSuch("client");
  if (status === "disabled") await auditBy(env, rc, "client.disabled", c.clientId);
  else await auditBy(env, rc, "client.updated", c.clientId, "ok", { fields: "status", status });
  return changed(env, c.clientId);
}

/** A disabled client is refused everywhere (authorize, token, user/me, disconnect) but kept. */
export function disable(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  return setStatus(env, rc, "disabled");
}

export function enable(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  return setStatus(env, rc, "active");
}

/** Deletes the client, its plid links and automatic-login grants. */
export async function remove(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const c = await existing(env, rc);
  if (!(await deleteClient(env, c.clientId))) throw E.noSuch("client");
  forgetClient(c.clientId);
  await auditBy(env, rc, "client.deleted", c.clientId);
  return json({ client_id: c.clientId, deleted: true });
}
