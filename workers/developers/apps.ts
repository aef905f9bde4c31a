// A developer's apps (docs/developers.md): the list, registering one (testing stage, the secret shown
// once), its page and settings, and its test numbers. Each action is written once and answered two
// ways: as a page (the forms) and as JSON (the API under the same session), so both check the same.

import { configOf, commonConfig, intVar } from "../core/config";
import { ApiError, E } from "../core/errors";
import { html, raw, type SafeHtml } from "../core/html";
import { json } from "../core/http";
import type { RequestContext } from "../core/router";
import { clientView } from "../admin/clients";
import { onlyFields } from "../admin/steps";
import { clientPatch, newClientFields } from "../admin/validate";
import { appFormFields, eventTypeBoxes, hidden, href, itemBoxes, when } from "../frame/layout";
import { forgetClient, getClient, updateClient, type AdminClient } from "../provider/store/clients";
import { roleOn, teamsOf, testNumbersOf, type TeamRole } from "../provider/store/developers";
import { registerClient } from "../provider/store/flows/apps";
import { APP_TEST_RANGE } from "../provider/store/directory/index";
import { audit } from "../provider/store/one-time/index";
import { actorOf, teamApp, type DevEnv, type DevSigned, consolePage } from "./gate";
import { issuer } from "../provider/store/flows/events";
import { d, type Lang } from "./i18n";
import { invitesSection, myInvites, teamSection, teamView } from "./team";
import {
  noticesFor,
  noticesSection,
  redirectsChanged,
  REVIEWED,
  reviewSection,
  reviewView,
  rotate,
  splitChange,
  submit,
  withdraw,
} from "./review";
import { reviewsOf } from "../provider/store/reviews";
import { checkConfig } from "../provider/store/config";
import { eventsSection, eventsView, resume, setStream, testEvent } from "./events";
import { streamView } from "../provider/store/flows/stream-view";
import { streamSection, streamWord } from "../frame/stream";
import {
  allocateTestNumber,
  APP_TEST_NUMBER_MS,
  removeAppTestNumber,
  renewTestNumber,
  viewOf,
  type TestNumberView,
} from "./test-numbers";

/** What a developer sets on their app (the operator keeps the SMS budget and the rest). */
export const DEVELOPER_FIELDS = [
  "name",
  "redirect_uris",
  "items",
  "purpose",
  "retention",
  "auto_login",
  "oidc",
  "events_uri",
  "event_types",
];

const parseMaxApps = (e: { DEVELOPER_MAX_APPS?: string }) => intVar(e, "DEVELOPER_MAX_APPS", 10, 1, 1000);
checkConfig(parseMaxApps);

/** DEVELOPER_MAX_APPS: the apps one person may own (default 10). */
export function maxApps(env: DevEnv): number {
  return configOf(env as { DEVELOPER_MAX_APPS?: string }, parseMaxApps);
}

/** A developer's view of an app: the admin API's fields, its stage and the developer's role. */
function appView(env: DevEnv, c: AdminClient, role: TeamRole): Record<string, unknown> {
  const { sms_daily_budget: _b, ...rest } = clientView(c, commonConfig(env).devMode);
  return { ...rest, role };
}

/** As `teamApp`, for its owners only (403 for a member). */
async function ownedApp(env: DevEnv, rc: RequestContext, s: DevSigned): Promise<AdminClient> {
  const { app, role } = await teamApp(env, rc, s);
  if (role !== "owner") throw new ApiError("access_denied", d(s.v.lang, "ownerOnly"), { status: 403 });
  return app;
}

// ---------------------------------------------------------------- actions

async function myApps(env: DevEnv, s: DevSigned) {
  const teams = await teamsOf(env, s.dev.subscriberId);
  const apps = await Promise.all(teams.map(async (t) => ({ t, c: await getClient(env, t.clientId) })));
  return apps.filter((a) => a.c !== null).map((a) => appView(env, a.c!, a.t.role));
}

/** Registers an app in the testing stage with the developer as its owner; its view with the secret (once). */
async function create(env: DevEnv, rc: RequestContext, s: DevSigned, body: Record<string, unknown>) {
  onlyFields(body, DEVELOPER_FIELDS);
  const fields = newClientFields(body, commonConfig(env).devMode);
  const made = await registerClient(env, fields, { person: s.dev, maxApps: maxApps(env) });
  if (made === "cap") throw E.invalidBecause("apps", `one person can own at most ${maxApps(env)} apps`);
  const { clientId } = made;
  rc.log.clientId = clientId;
  await audit(env, "client.created", clientId, "ok", {
    actor: actorOf(s.dev),
    items: fields.items.join(","),
    auto_login: fields.autoLogin,
    oidc: fields.oidc,
    stage: "testing",
  });
  const c = (await getClient(env, clientId))!;
  return { ...appView(env, c, "owner"), client_id: clientId, client_secret: made.secret };
}

/** Changes an app's settings (owners). A live app's name, items, purpose or retention go through review. */
async function update(env: DevEnv, rc: RequestContext, s: DevSigned, body: Record<string, unknown>) {
  const app = await ownedApp(env, rc, s);
  onlyFields(body, DEVELOPER_FIELDS);
  const patch = clientPatch(body, commonConfig(env).devMode);
  const { direct, review } = await splitChange(env, s, app, body, patch);
  const fields = Object.keys(body).filter((f) => !review || !(REVIEWED as readonly string[]).includes(f));
  if (fields.length > 0) {
    if (!(await updateClient(env, app.clientId, direct))) throw E.noSuch("app");
    forgetClient(app.clientId);
    await audit(env, "client.updated", app.clientId, "ok", { actor: actorOf(s.dev), fields: fields.sort().join(",") });
    if (direct.redirectUris !== undefined) await redirectsChanged(env, s, app);
  }
  return { ...appView(env, (await getClient(env, app.clientId))!, "owner"), review: reviewView(review) };
}

async function testNumbers(env: DevEnv, clientId: string): Promise<TestNumberView[]> {
  return Promise.all((await testNumbersOf(env, clientId)).map((n) => viewOf(env, n)));
}

async function addTestNumber(env: DevEnv, rc: RequestContext, s: DevSigned): Promise<TestNumberView> {
  const { app } = await teamApp(env, rc, s);
  const n = await allocateTestNumber(env, app.clientId, actorOf(s.dev));
  await audit(env, "test_number.added", app.clientId, "ok", { actor: actorOf(s.dev), clients: 1, replaced: false });
  return n;
}

const phoneOf = (rc: RequestContext) => {
  const p = rc.params.phone ?? "";
  if (!/^\d{11}$/.test(p)) throw E.noSuch("test number");
  return p;
};

async function renew(env: DevEnv, rc: RequestContext, s: DevSigned): Promise<TestNumberView> {
  const { app } = await teamApp(env, rc, s);
  const n = await renewTestNumber(env, app.clientId, phoneOf(rc));
  await audit(env, "test_number.renewed", app.clientId, "ok", { actor: actorOf(s.dev) });
  return n;
}

async function removeNumber(env: DevEnv, rc: RequestContext, s: DevSigned): Promise<void> {
  const { app } = await teamApp(env, rc, s);
  await removeAppTestNumber(env, app.clientId, phoneOf(rc));
  await audit(env, "test_number.removed", app.clientId, "ok", { actor: actorOf(s.dev) });
}

// ---------------------------------------------------------------- the API

/** Review and rotation, for an app's owners. */
const owned =
  <T>(f: (env: DevEnv, rc: RequestContext, s: DevSigned, app: AdminClient) => Promise<T>) =>
  async (env: DevEnv, rc: RequestContext, s: DevSigned): Promise<T> =>
    f(env, rc, s, await ownedApp(env, rc, s));
const submitOwned = owned(submit);
const withdrawOwned = owned(withdraw);
const rotateOwned = owned((env, _rc, s, app) => rotate(env, s, app, s.body));
const resumeOwned = owned((env, _rc, s, app) => resume(env, s, app));
const pauseStreamOwned = owned((env, _rc, s, app) => setStream(env, s, app, "paused"));
const resumeStreamOwned = owned((env, _rc, s, app) => setStream(env, s, app, "enabled"));
/** A test event: any member of the team. */
const testOnTeam = async (env: DevEnv, rc: RequestContext, s: DevSigned) =>
  testEvent(env, s, (await teamApp(env, rc, s)).app);

export const api = {
  submitReview: async (_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) =>
    json(await submitOwned(env, rc, s), 201),
  withdrawReview: async (_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) => {
    await withdrawOwned(env, rc, s);
    return json({ withdrawn: true });
  },
  review: async (_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) => {
    const { app } = await teamApp(env, rc, s);
    return json({ reviews: (await reviewsOf(env, app.clientId)).map(reviewView) });
  },
  rotate: async (_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) => json(await rotateOwned(env, rc, s)),
  events: async (_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) =>
    json(await eventsView(env, (await teamApp(env, rc, s)).app)),
  testEvent: async (_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) => json(await testOnTeam(env, rc, s)),
  resumeEvents: async (_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) =>
    json(await resumeOwned(env, rc, s)),
  stream: async (_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) =>
    json({ stream: await streamView(env, (await teamApp(env, rc, s)).app.clientId) }),
  pauseStream: async (_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) =>
    json(await pauseStreamOwned(env, rc, s)),
  resumeStream: async (_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) =>
    json(await resumeStreamOwned(env, rc, s)),
  list: async (_req: Request, env: DevEnv, _rc: RequestContext, s: DevSigned) =>
    json({ apps: await myApps(env, s), max_apps: maxApps(env) }),
  create: async (_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) =>
    json(await create(env, rc, s, s.body), 201),
  read: async (_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) => {
    const { app, role } = await teamApp(env, rc, s);
    return json(appView(env, app, role));
  },
  update: async (_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) =>
    json(await update(env, rc, s, s.body)),
  testNumbers: async (_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) => {
    const { app } = await teamApp(env, rc, s);
    return json({ test_numbers: await testNumbers(env, app.clientId) });
  },
  addTestNumber: async (_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) =>
    json(await addTestNumber(env, rc, s), 201),
  renewTestNumber: async (_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) =>
    json(await renew(env, rc, s)),
  removeTestNumber: async (_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) => {
    await removeNumber(env, rc, s);
    return json({ deleted: true });
  },
};

// ---------------------------------------------------------------- the pages

/** A form's fields as the API's JSON body (the consoles' one reader: console/layout.ts). */
const formBody = (s: DevSigned): Record<string, unknown> => appFormFields(s.params, false);

function appForm(
  L: Lang,
  v: DevSigned["v"],
  action: string,
  a: Record<string, unknown>,
  submit: string,
  editable: boolean,
) {
  const dis = editable ? "" : raw(" disabled");
  const text = (k: string) => (typeof a[k] === "string" ? (a[k] as string) : "");
  return html`<form class="card" method="post" action="${action}">${hidden(v)}
<label>${d(L, "name")}<input type="text" name="name" required maxlength="100" value="${text("name")}"${dis}></label>
<label>${d(L, "redirectUris")}<textarea name="redirect_uris" required${dis}>${((a.redirect_uris as string[] | undefined) ?? []).join("\n")}</textarea></label>
${itemBoxes(L, d(L, "items"), (a.items as string[] | undefined) ?? [], dis)}
<label>${d(L, "purpose")}<input type="text" name="purpose" maxlength="200" value="${text("purpose")}"${dis}></label>
<label>${d(L, "retention")}<input type="text" name="retention" maxlength="200" value="${text("retention")}"${dis}></label>
<div class="checks"><label><input type="checkbox" name="auto_login"${a.auto_login ? raw(" checked") : ""}${dis}> ${d(L, "autoLogin")}</label>
<label><input type="checkbox" name="oidc"${a.oidc ? raw(" checked") : ""}${dis}> ${d(L, "oidc")}</label></div>
<label>${d(L, "eventsUri")}<input type="url" name="events_uri" value="${text("events_uri")}"${dis}></label>
${eventTypeBoxes(d(L, "eventTypes"), a.event_types as string[] | undefined, dis)}
${editable ? html`<p><button type="submit">${submit}</button></p>` : ""}
</form>`;
}

/**
 * What an app's server needs to call the service (docs/developers.md "Integration"): the
 * interface's four addresses under the service's public URL, and with OpenID Connect on, the
 * issuer URL an identity platform takes and its discovery document.
 */
function integrationSection(L: Lang, iss: string, app: AdminClient): SafeHtml {
  const row = (key: Parameters<typeof d>[1], url: string) => html`<dt>${d(L, key)}</dt><dd class="mono">${url}</dd>`;
  // the app's Worker with phone-login-kit (packages/kit/README.md): what to paste, its secret left in a secret
  const kit = `createPhoneLogin<Env>({
  providerUrl: ${JSON.stringify(iss)},
  clientId: ${JSON.stringify(app.clientId)},
  redirectUri: ${JSON.stringify(app.redirectUris[0] ?? "https://<your app>/auth/callback")},
  // clientSecret: env.PHONE_LOGIN_CLIENT_SECRET (npx wrangler secret put PHONE_LOGIN_CLIENT_SECRET)
});`;
  return html`<h2>${d(L, "integration")}</h2><p class="hint">${d(L, "integrationLead")}</p>
<dl>${row("endpointAuthorize", `${iss}/oauth2/authorize`)}${row("endpointToken", `${iss}/oauth2/token`)}${row("endpointUser", `${iss}/v1/user/me`)}${row("endpointDisconnect", `${iss}/v1/user/disconnect`)}${app.oidc ? html`${row("issuer", iss)}${row("endpointDiscovery", `${iss}/.well-known/openid-configuration`)}` : ""}</dl>
<p class="hint">${d(L, "kitLead")}</p><pre class="snippet"><code>${kit}</code></pre>`;
}

const stageText = (L: Lang, stage: unknown) => d(L, stage === "live" ? "stageLive" : "stageTesting");
const roleText = (L: Lang, role: unknown) => d(L, role === "owner" ? "roleOwner" : "roleMember");

interface Outcome {
  notice?: string;
  error?: string;
  status?: number;
  secret?: string;
  form?: Record<string, unknown>;
}

/** An action's refusal as the page shows it (a 5xx or a 403 goes on to the gate's answer). */
function failed(err: unknown, form?: Record<string, unknown>): Outcome {
  const e = err as { status?: number; message?: string };
  if (typeof e.status !== "number" || e.status >= 500 || e.status === 403 || e.status === 404) throw err;
  return { error: e.message ?? "", status: e.status, form };
}

const boxes = (o: Outcome): SafeHtml =>
  html`${o.notice ? html`<p class="notice" role="status">${o.notice}</p>` : ""}${o.error ? html`<div class="alert" role="alert"><p>${o.error}</p></div>` : ""}`;

/** GET /developers (signed in): the developer's apps and the form to register one. */
export async function appsPage(req: Request, env: DevEnv, rc: RequestContext, s: DevSigned, o: Outcome = {}) {
  const { v } = s;
  const L = v.lang;
  const apps = await myApps(env, s);
  const rows = apps.map(
    (a) =>
      html`<tr><td><a href="${href(v, `/developers/apps/${a.client_id as string}`)}">${a.name as string}</a></td><td class="mono">${a.client_id as string}</td><td>${stageText(L, a.stage)}</td><td>${roleText(L, a.role)}</td></tr>`,
  );
  const owned = apps.filter((a) => a.role === "owner").length;
  const body = html`<h1>${d(L, "appsTitle")}</h1><p class="lead">${d(L, "appsLead")}</p>${boxes(o)}
${noticesSection(L, await noticesFor(env, s), new Map(apps.map((a) => [a.client_id as string, a.name as string])))}
${invitesSection(v, await myInvites(env, s))}
${
  apps.length === 0
    ? html`<p>${d(L, "noApps")}</p>`
    : html`<table><caption>${d(L, "appsTitle")}</caption><thead><tr><th scope="col">${d(L, "name")}</th><th scope="col">${d(L, "clientId")}</th><th scope="col">${d(L, "stage")}</th><th scope="col">${d(L, "role")}</th></tr></thead><tbody>${rows}</tbody></table>`
}
<h2>${d(L, "createTitle")}</h2>
${owned >= maxApps(env) ? html`<p class="notice">${d(L, "capReached", { max: String(maxApps(env)) })}</p>` : appForm(L, v, "/developers/apps", o.form ?? {}, d(L, "create"), true)}`;
  return consolePage(v, d(L, "appsTitle"), body, { status: o.status });
}

/** POST /developers/apps: registers an app, then its page with the secret shown once. */
export async function createPage(req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) {
  const body = formBody(s);
  try {
    const made = await create(env, rc, s, body);
    rc.params.id = made.client_id as string;
    return appPage(req, env, rc, s, { secret: made.client_secret, notice: d(s.v.lang, "created") });
  } catch (err) {
    return appsPage(req, env, rc, s, failed(err, body));
  }
}

/** GET /developers/apps/:id (and the answer of every action on it). */
export async function appPage(req: Request, env: DevEnv, rc: RequestContext, s: DevSigned, o: Outcome = {}) {
  const { v } = s;
  const L = v.lang;
  const { app, role } = await teamApp(env, rc, s);
  const a = appView(env, app, role);
  const base = `/developers/apps/${app.clientId}`;
  const owner = role === "owner";
  const numbers = await testNumbers(env, app.clientId);
  const button = (path: string, label: string, cls = "secondary") =>
    html`<form class="inline" method="post" action="${base}${path}">${hidden(v)}<button type="submit" class="${cls}">${label}</button></form>`;
  const numberRows = numbers.map(
    (n) =>
      html`<tr><td class="mono">${n.phoneNo}</td><td>SKT</td><td>${n.name}</td><td class="mono">${n.code}</td><td>${when(n.expires_at, L)}</td><td>${button(`/test-numbers/${n.phoneNo}/renew`, d(L, "renew"))} ${button(`/test-numbers/${n.phoneNo}/remove`, d(L, "remove"))}</td></tr>`,
  );
  const body = html`<h1>${app.name}</h1>${boxes(o)}
<dl><dt>${d(L, "clientId")}</dt><dd class="mono">${app.clientId}</dd><dt>${d(L, "stage")}</dt><dd>${stageText(L, app.stage)}</dd><dt>${d(L, "status")}</dt><dd>${d(L, app.status === "active" ? "statusActive" : "statusDisabled")}</dd><dt>${d(L, "role")}</dt><dd>${roleText(L, role)}</dd></dl>
<p><a href="${href(v, `${base}/stats`)}">${d(L, "stats")}</a></p>
${o.secret ? html`<div class="notice" role="status"><p>${d(L, "secretOnce")}</p><code class="secret">${o.secret}</code></div>` : ""}
${integrationSection(L, issuer(env), app)}
<h2>${d(L, "settings")}</h2>
${appForm(L, v, base, o.form ?? a, d(L, "save"), owner)}
<h2>${d(L, "testNumbers")}</h2>
<p class="hint">${d(L, "testNumbersLead", { range: APP_TEST_RANGE.label, days: String(APP_TEST_NUMBER_MS / 86_400_000) })}</p>
${
  numbers.length === 0
    ? html`<p>${d(L, "noTestNumbers")}</p>`
    : html`<table><caption>${d(L, "testNumbers")}</caption><thead><tr><th scope="col">${d(L, "phone")}</th><th scope="col">telcoCd</th><th scope="col">${d(L, "name")}</th><th scope="col">${d(L, "code")}</th><th scope="col">${d(L, "expires")}</th><th scope="col"><span class="skip">${d(L, "remove")}</span></th></tr></thead><tbody>${numberRows}</tbody></table>`
}
${button("/test-numbers", d(L, "addTestNumber"), "")}
${eventsSection(v, base, await eventsView(env, app), owner, true)}
${streamSection(v, base, await streamView(env, app.clientId), owner, (k) => d(L, k))}
${teamSection(v, base, await teamView(env, app.clientId), owner, s.dev.developer)}
${reviewSection(v, base, app, (await reviewsOf(env, app.clientId, 1))[0] ?? null, owner)}
${owner ? html`<h2>${d(L, "rotate")}</h2>${button("/rotate-secret", d(L, "rotate"), "secondary")}` : ""}`;
  return consolePage(v, app.name, body, { status: o.status });
}

/** A page action on an app: the app's page with its notice, or with the refusal. */
function pageAction(
  run: (env: DevEnv, rc: RequestContext, s: DevSigned) => Promise<unknown>,
  notice:
    | "saved"
    | "testNumberAdded"
    | "renewed"
    | "removed"
    | "reviewSubmitted"
    | "reviewWithdrawn"
    | "eventsResumed"
    | "streamPausedDone"
    | "streamResumedDone",
) {
  return async (req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) => {
    try {
      await run(env, rc, s);
      const text =
        notice === "streamPausedDone" || notice === "streamResumedDone"
          ? streamWord(s.v.lang, notice)
          : d(s.v.lang, notice);
      return appPage(req, env, rc, s, { notice: text });
    } catch (err) {
      return appPage(req, env, rc, s, failed(err, notice === "saved" ? formBody(s) : undefined));
    }
  };
}

export const pages = {
  update: pageAction((env, rc, s) => update(env, rc, s, formBody(s)), "saved"),
  submitReview: pageAction(submitOwned, "reviewSubmitted"),
  withdrawReview: pageAction(withdrawOwned, "reviewWithdrawn"),
  resumeEvents: pageAction(resumeOwned, "eventsResumed"),
  pauseStream: pageAction(pauseStreamOwned, "streamPausedDone"),
  resumeStream: pageAction(resumeStreamOwned, "streamResumedDone"),
  testEvent: async (req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) => {
    try {
      const r = await testOnTeam(env, rc, s);
      const cls = {
        delivered: "classDelivered",
        refused: "classRefused",
        failed: "classFailed",
        timed_out: "classTimedOut",
      } as const;
      return appPage(req, env, rc, s, { notice: d(s.v.lang, "testEventSent", { class: d(s.v.lang, cls[r.class]) }) });
    } catch (err) {
      return appPage(req, env, rc, s, failed(err));
    }
  },
  rotate: async (req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) => {
    try {
      const r = await rotateOwned(env, rc, { ...s, body: {} });
      return appPage(req, env, rc, s, { notice: d(s.v.lang, "rotated"), secret: r.client_secret });
    } catch (err) {
      return appPage(req, env, rc, s, failed(err));
    }
  },
  addTestNumber: pageAction(addTestNumber, "testNumberAdded"),
  renewTestNumber: pageAction(renew, "renewed"),
  removeTestNumber: pageAction(removeNumber, "removed"),
};
