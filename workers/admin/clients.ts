// /admin/clients: register, read, list, update, rotate the secret, disable/enable, delete
// (docs/operations.md "Admin API"), as services (./access.ts) the API's routes (./routes.ts) and the
// console run. Every change is audited with its caller and dropped from this isolate's client cache;
// other isolates follow within CLIENT_CACHE_SECONDS.

import { auditBy, service, type Caller } from "./access";
import { adminConfig, MAX_ROTATION_GRACE_SECONDS } from "./config";
import type { AdminEnv } from "./config";
import { randomAlphanumeric } from "../core/crypto";
import { commonConfig } from "../core/config";
import { E } from "../core/errors";
import { clientPatch, newClientFields, type ClientFields } from "./validate";
import { eventsUriProblem } from "../provider/store/hosts";
import {
  forgetClient,
  getClient,
  listClients,
  rotateClientSecret,
  sealSecret,
  updateClient,
  type AdminClient,
} from "../provider/store/clients";
import { deleteClient } from "../provider/store/flows/delete-client";
import { registerClient } from "../provider/store/flows/apps";

/** reference behaviour: secrets are 64 characters (as the registration draws them). */
const CLIENT_SECRET_LENGTH = 64;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
/** An app's own SMS budget as the audit detail holds it: the number, or `default` (SMS_APP_DAILY_BUDGET). */
const budgetDetail = (b: number | null): number | string => b ?? "default";

/** A client as the API answers it. */
export interface ClientView {
  client_id: string;
  name: string;
  redirect_uris: string[];
  items: string[];
  auto_login: boolean;
  oidc: boolean;
  events_uri: string | null;
  events_uri_problem: string | null;
  event_types: string[];
  purpose: string | null;
  retention: string | null;
  sms_daily_budget: number | null;
  status: "active" | "disabled";
  stage: "testing" | "live";
  created_at: string;
  updated_at: string;
  previous_secret_valid_until: string | null;
  events_paused_since: string | null;
}

/** A client's view with its new secret, shown once (registration, rotation). */
export type WithSecret = ClientView & { client_secret: string };

/**
 * The wire form of a client (snake_case, ISO times); never a secret. `events_uri_problem`: why its
 * `events_uri` would be refused now (registered before the rule, workers/provider/store/hosts.ts), else null;
 * the address keeps receiving events until it is changed.
 */
export function clientView(c: AdminClient, devMode: boolean): ClientView {
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
    created_at: iso(c.createdAt)!,
    updated_at: iso(c.updatedAt)!,
    previous_secret_valid_until: iso(c.previousSecretUntil),
    events_paused_since: iso(c.eventsPausedAt),
  };
}

/** The client `clientId` names; logged only once it is one (a number or a name typed there stays out of the log). */
async function existing(env: AdminEnv, { rc }: Caller, clientId: string): Promise<AdminClient> {
  const c = await getClient(env, clientId);
  if (!c) throw E.noSuch("client");
  rc.log.clientId = c.clientId;
  return c;
}

/** Re-reads the client after a change, drops it from the cache and answers its view. */
async function changed(env: AdminEnv, clientId: string): Promise<ClientView> {
  forgetClient(clientId);
  const c = await getClient(env, clientId);
  if (!c) throw E.noSuch("client");
  return clientView(c, commonConfig(env).devMode);
}

/** An app, by its client id. */
export interface AppRef {
  clientId: string;
}

/** Every client. */
export const list = service<void, { clients: ClientView[] }>("viewer", "GET", async (env) => {
  const devMode = commonConfig(env).devMode;
  return { clients: (await listClients(env)).map((c) => clientView(c, devMode)) };
});

export const read = service<AppRef, ClientView>("viewer", "GET", async (env, caller, { clientId }) =>
  clientView(await existing(env, caller, clientId), commonConfig(env).devMode),
);

/** Registers a client from its fields (./validate.ts); its view with the secret, shown once. */
export const create = service<ClientFields, WithSecret>("editor", "POST", async (env, caller, body) => {
  const fields = newClientFields(body, commonConfig(env).devMode);
  const made = await registerClient(env, fields);
  if (made === "cap") throw E.server("a registration without an owner has no cap");
  caller.rc.log.clientId = made.clientId;
  await auditBy(env, caller, "client.created", made.clientId, "ok", {
    items: fields.items.join(","),
    auto_login: fields.autoLogin,
    oidc: fields.oidc,
    event_types: fields.eventTypes.join(","),
    sms_daily_budget: budgetDetail(fields.smsDailyBudget),
  });
  // The secret is shown here once; it is stored only sealed.
  return { ...(await changed(env, made.clientId)), client_secret: made.secret };
});

/** Changes the fields given (at least one). */
export const update = service<AppRef & { fields: ClientFields }, ClientView>(
  "editor",
  "PATCH",
  async (env, caller, { clientId, fields }) => {
    const patch = clientPatch(fields, commonConfig(env).devMode);
    const c = await existing(env, caller, clientId);
    if (!(await updateClient(env, c.clientId, patch))) throw E.noSuch("client");
    await auditBy(env, caller, "client.updated", c.clientId, "ok", {
      fields: Object.keys(fields).sort().join(","),
      // what an app may send is money and sign-ins: the trail keeps the value, not only that it changed
      ...(patch.smsDailyBudget !== undefined ? { sms_daily_budget: budgetDetail(patch.smsDailyBudget) } : {}),
    });
    return changed(env, c.clientId);
  },
);

function graceSeconds(g: unknown, dflt: number): number {
  if (g === undefined) return dflt;
  if (typeof g !== "number" || !Number.isInteger(g) || g < 0 || g > MAX_ROTATION_GRACE_SECONDS) {
    throw E.invalidBecause("grace_seconds", `must be a whole number from 0 to ${MAX_ROTATION_GRACE_SECONDS}`);
  }
  return g;
}

/**
 * A new secret, shown once. The old one keeps working for the grace period (apps redeploy with the
 * new one meanwhile; tokens issued under the old one are encrypted with it, spec §2.2); a grace
 * of 0 ends it at once (a leaked secret). `grace_seconds` unset: ROTATION_GRACE_SECONDS.
 */
export const rotate = service<AppRef & { grace_seconds?: unknown }, WithSecret>(
  "admin",
  "POST",
  async (env, caller, input) => {
    const grace = graceSeconds(input.grace_seconds, adminConfig(env).rotationGraceSeconds);
    const c = await existing(env, caller, input.clientId);
    const secret = randomAlphanumeric(CLIENT_SECRET_LENGTH);
    const until = grace > 0 ? Date.now() + grace * 1000 : null;
    if (!(await rotateClientSecret(env, c.clientId, await sealSecret(env, c.clientId, secret), until)))
      throw E.noSuch("client");
    await auditBy(env, caller, "client.secret_rotated", c.clientId, "ok", { grace_seconds: grace });
    return { ...(await changed(env, c.clientId)), client_secret: secret };
  },
);

const setStatus = (status: "active" | "disabled") =>
  service<AppRef, ClientView>("editor", "POST", async (env, caller, { clientId }) => {
    const c = await existing(env, caller, clientId);
    if (!(await updateClient(env, c.clientId, { status }))) throw E.noSuch("client");
    if (status === "disabled") await auditBy(env, caller, "client.disabled", c.clientId);
    else await auditBy(env, caller, "client.updated", c.clientId, "ok", { fields: "status", status });
    return changed(env, c.clientId);
  });

/** A disabled client is refused everywhere (authorize, token, user/me, disconnect) but kept. */
export const disable = setStatus("disabled");
export const enable = setStatus("active");

/** Deletes the client, its plid links and automatic-login grants. */
export const remove = service<AppRef, { client_id: string; deleted: true }>(
  "admin",
  "DELETE",
  async (env, caller, { clientId }) => {
    const c = await existing(env, caller, clientId);
    if (!(await deleteClient(env, c.clientId))) throw E.noSuch("client");
    forgetClient(c.clientId);
    await auditBy(env, caller, "client.deleted", c.clientId);
    return { client_id: c.clientId, deleted: true };
  },
);
