// The console's other pages (docs/console.md): the overview (counts, notices, the place of the
// metrics' charts), the directory (counts from the shards' counters, and the browser's import),
// the audit (search by time, event, app and actor; NDJSON export), operators and API tokens.

import { html } from "../core/html";
import { redirect } from "../core/http";
import type { RequestContext } from "../core/router";
import { exportEvents, listEvents, ndjsonResponse } from "../admin/audit";
import { summary } from "../admin/directory";
import {
  createApiToken,
  grantOperator,
  listAllOperators,
  listApiTokens,
  revokeApiToken,
  revokeOperator,
  withdrawInvite,
} from "../admin/operators";
import { perform } from "../admin/access";
import { ROLES } from "../provider/store/operators";
import { callerOf, failed } from "./apps";
import type { ConsoleEnv, Signed } from "./gate";
import { c } from "./i18n";
import { IMPORT_JS } from "./import-script";
import {
  consolePage,
  covers,
  errorBox,
  hidden,
  href,
  outcomeBox,
  roleName,
  when,
  type Outcome,
  type Viewer,
} from "./layout";

/** GET /console/directory: counts and, for an editor, the browser's import. */
export async function directoryPage(req: Request, env: ConsoleEnv, rc: RequestContext, s: Signed): Promise<Response> {
  const { v } = s;
  const L = v.lang;
  const counts = await perform(summary, env, callerOf(rc, s), undefined);
  const editor = covers(v.role, "editor");
  const body = html`<h1>${c(L, "directory")}</h1><p class="lead">${c(L, "directoryLead")}</p>
<ul class="grid">
<li>${c(L, "subscribersCount")}<b data-count="subscribers">${counts.subscribers.toLocaleString("en-US")}</b></li>
<li>${c(L, "testNumbersCount")}<b>${counts.test_numbers.toLocaleString("en-US")}</b></li>
<li>${c(L, "pendingChanges")}<b>${counts.pending_changes.toLocaleString("en-US")}</b></li>
<li>${c(L, "shards")}<b>${counts.shards}</b></li>
</ul>
<h2>${c(L, "importTitle")}</h2>
${
  editor
    ? html`<p class="hint">${c(L, "importLead")}</p>
<form id="import-form" class="card" data-lang="${L}" data-max-rows="1000">
<label for="import-file">${c(L, "importFile")}</label><input type="file" id="import-file" accept=".csv,.ndjson,.jsonl,.json,text/csv,application/x-ndjson">
<p><button type="submit" id="import-start">${c(L, "importStart")}</button></p>
</form>
<div id="import-panel" hidden>
<progress id="import-progress" max="1" value="0" aria-label="${c(L, "importTitle")}"></progress>
<p id="import-status" aria-live="polite"></p>
<div id="import-rejected"></div>
</div>`
    : html`<p>${c(L, "importNeedsEditor")}</p>`
}`;
  return consolePage(v, c(L, "directory"), body, editor ? { script: IMPORT_JS } : {});
}

/** GET /console/audit: a search form and a page of events (the API's own query names). */
export async function auditPage(req: Request, env: ConsoleEnv, rc: RequestContext, s: Signed): Promise<Response> {
  const { v, params } = s;
  const L = v.lang;
  let page: Awaited<ReturnType<typeof listEvents.run>> = { events: [], next_before: null };
  let error: string | undefined;
  try {
    page = await perform(listEvents, env, callerOf(rc, s), rc.url.searchParams);
  } catch (err) {
    error = failed(err).error;
  }
  const q = (n: string) => params.get(n) ?? "";
  const field = (name: string, label: string, type = "text") =>
    html`<label>${label}<input type="${type}" name="${name}" value="${q(name)}"></label>`;
  const rows = page.events.map(
    (e) =>
      html`<tr><td>${when(e.at, L)}</td><td><code>${e.type}</code></td><td>${e.client_id ?? ""}</td><td>${e.outcome}</td><td class="mono">${
        e.detail
          ? Object.entries(e.detail)
              .map(([k, x]) => `${k}=${String(x)}`)
              .join(" ")
          : ""
      }</td></tr>`,
  );
  const nextQuery: Record<string, string> = {};
  for (const n of ["since", "type", "client_id", "actor", "limit"]) if (q(n)) nextQuery[n] = q(n);
  const body = html`<h1>${c(L, "audit")}</h1><p class="lead">${c(L, "auditLead")}</p>
${error ? errorBox(v, error, rc.requestId) : ""}
<form class="inline" method="get" action="/console/audit"><input type="hidden" name="lang" value="${L}">
${field("since", c(L, "from"))}${field("until", c(L, "to"))}${field("type", c(L, "eventType"))}${field("client_id", c(L, "clientId"))}${field("actor", c(L, "actor"))}
<button type="submit">${c(L, "search")}</button></form>
${
  page.events.length
    ? html`<table><caption>${c(L, "audit")}</caption><thead><tr><th scope="col">${c(L, "when")}</th><th scope="col">${c(L, "event")}</th><th scope="col">${c(L, "clientId")}</th><th scope="col">${c(L, "outcome")}</th><th scope="col">${c(L, "detail")}</th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<p>${c(L, "noEvents")}</p>`
}
${page.next_before ? html`<p><a href="${href(v, "/console/audit", { ...nextQuery, before: page.next_before })}">${c(L, "nextPage")} →</a></p>` : ""}
<h2>${c(L, "exportNdjson")}</h2>
<form class="inline" method="get" action="/console/audit/export">
<label>${c(L, "from")}<input type="text" name="from" required placeholder="2026-11-26T09:00:00+09:00" value="${q("from")}"></label>
<label>${c(L, "to")}<input type="text" name="to" placeholder="2026-11-26T18:00:00+09:00" value="${q("to")}"></label>
<button type="submit">${c(L, "exportNdjson")}</button></form>`;
  return consolePage(v, c(L, "audit"), body);
}

/** GET /console/audit/export: the API's NDJSON, as a download. */
export async function auditExport(_req: Request, env: ConsoleEnv, rc: RequestContext, s: Signed): Promise<Response> {
  const out = ndjsonResponse((await perform(exportEvents, env, callerOf(rc, s), rc.url.searchParams)).ndjson);
  out.headers.set("Content-Disposition", 'attachment; filename="audit.ndjson"');
  return out;
}

const roleSelect = (v: Viewer) =>
  html`<label>${c(v.lang, "role")}<select name="role">${ROLES.map((r) => html`<option value="${r}">${roleName(v.lang, r)} (${r})</option>`)}</select></label>`;

/** GET /console/operators (admin). */
export async function operatorsPage(
  req: Request,
  env: ConsoleEnv,
  rc: RequestContext,
  s: Signed,
  o: Outcome = {},
): Promise<Response> {
  const { v } = s;
  const L = v.lang;
  const r = await perform(listAllOperators, env, callerOf(rc, s), undefined);
  const admins = r.operators.filter((op) => op.role === "admin").length;
  const me = s.actor.id.slice("operator:".length);
  const post = (action: string, label: string, extra = html``) =>
    html`<form class="inline" method="post" action="${action}">${hidden(v)}${extra}<button type="submit" class="secondary">${label}</button></form>`;
  const body = html`<h1>${c(L, "operators")}</h1><p class="lead">${c(L, "operatorsLead")}</p>${outcomeBox(v, rc.requestId, o, "tokenOnce")}
<table><caption>${c(L, "operators")}</caption><thead><tr><th scope="col">ID</th><th scope="col">${c(L, "role")}</th><th scope="col">${c(L, "phone")}</th><th scope="col">${c(L, "grantedBy")}</th><th scope="col">${c(L, "since")}</th><th scope="col">${c(L, "lastSeen")}</th><th scope="col"><span class="skip">${c(L, "revoke")}</span></th></tr></thead>
<tbody>${r.operators.map(
    (op) =>
      html`<tr><td><code>${op.id}</code></td><td>${roleName(L, op.role)}</td><td class="mono">${op.masked}</td><td><code>${op.granted_by}</code></td><td>${when(op.taken_at, L)}</td><td>${when(op.last_seen_at, L)}</td><td>${
        // the last admin's role is never ended here (the service refuses it): the console keeps one
        op.role === "admin" && admins === 1
          ? html`<p class="hint">${c(L, "lastAdmin")}</p>`
          : post(`/console/operators/${op.id}/revoke`, c(L, op.id === me ? "revokeMine" : "revoke"))
      }</td></tr>`,
  )}</tbody></table>
<h2>${c(L, "invites")}</h2>
${
  r.invites.length
    ? html`<ul>${r.invites.map((i) => html`<li><span class="mono">${i.masked}</span> · ${roleName(L, i.role)} · ${c(L, "expires")} ${when(i.expires_at, L)}</li>`)}</ul>`
    : html`<p>${c(L, "noInvites")}</p>`
}
<h2>${c(L, "grant")}</h2>
<form class="card" method="post" action="/console/operators">${hidden(v)}
<label>${c(L, "phone")}<input type="tel" name="phone" required pattern="01[016789][0-9]{7,8}" inputmode="numeric" autocomplete="off"></label>
${roleSelect(v)}<p><button type="submit">${c(L, "grant")}</button></p></form>
<h2>${c(L, "withdraw")}</h2>
${post("/console/operators/invites/withdraw", c(L, "withdraw"), html`<label>${c(L, "phone")}<input type="tel" name="phone" required inputmode="numeric" autocomplete="off"></label>`)}`;
  return consolePage(v, c(L, "operators"), body, { status: o.status });
}

/** POST /console/operators[/…] (admin). */
export function operatorAction(action: "grant" | "revoke" | "withdraw") {
  return async (req: Request, env: ConsoleEnv, rc: RequestContext, s: Signed): Promise<Response> => {
    const L = s.v.lang;
    try {
      if (action === "grant") {
        const r = await perform(grantOperator, env, callerOf(rc, s), {
          phone: s.params.get("phone") ?? "",
          role: s.params.get("role") ?? "",
        });
        return operatorsPage(req, env, rc, s, {
          notice: c(L, "invited", { masked: r.masked, role: roleName(L, r.role) }),
        });
      }
      if (action === "withdraw")
        await perform(withdrawInvite, env, callerOf(rc, s), { phone: s.params.get("phone") ?? "" });
      else await perform(revokeOperator, env, callerOf(rc, s), { id: rc.params.id! });
      // one who ended their own role has no operators page: the console says what they have now
      if (action === "revoke" && s.actor.id === `operator:${rc.params.id}`) return redirect(303, href(s.v, "/console"));
      return operatorsPage(req, env, rc, s, { notice: c(L, "saved") });
    } catch (err) {
      return operatorsPage(req, env, rc, s, failed(err));
    }
  };
}

/** GET /console/tokens (admin). */
export async function tokensPage(
  req: Request,
  env: ConsoleEnv,
  rc: RequestContext,
  s: Signed,
  o: Outcome = {},
): Promise<Response> {
  const { v } = s;
  const L = v.lang;
  const r = await perform(listApiTokens, env, callerOf(rc, s), undefined);
  const body = html`<h1>${c(L, "tokens")}</h1><p class="lead">${c(L, "tokensLead")}</p>${outcomeBox(v, rc.requestId, o, "tokenOnce")}
${
  r.tokens.length
    ? html`<table><caption>${c(L, "tokens")}</caption><thead><tr><th scope="col">${c(L, "name")}</th><th scope="col">${c(L, "role")}</th><th scope="col">${c(L, "grantedBy")}</th><th scope="col">${c(L, "created")}</th><th scope="col">${c(L, "lastUsed")}</th><th scope="col"><span class="skip">${c(L, "revokeToken")}</span></th></tr></thead><tbody>${r.tokens.map(
        (t) =>
          html`<tr><td><code>${t.name}</code></td><td>${roleName(L, t.role)}</td><td><code>${t.created_by}</code></td><td>${when(t.created_at, L)}</td><td>${
            t.last_used_at ? when(t.last_used_at, L) : c(L, "never")
          }</td><td><form class="inline" method="post" action="/console/tokens/${t.name}/revoke">${hidden(v)}<button type="submit" class="secondary">${c(L, "revokeToken")}</button></form></td></tr>`,
      )}</tbody></table>`
    : html`<p>${c(L, "noTokens")}</p>`
}
<h2>${c(L, "createToken")}</h2>
<form class="card" method="post" action="/console/tokens">${hidden(v)}
<label>${c(L, "tokenName")}<input type="text" name="name" required pattern="[a-z0-9][a-z0-9-]{0,31}" autocomplete="off"></label>
${roleSelect(v)}<p><button type="submit">${c(L, "createToken")}</button></p></form>`;
  return consolePage(v, c(L, "tokens"), body, { status: o.status });
}

/** POST /console/tokens[/…] (admin). */
export function tokenAction(action: "create" | "revoke") {
  return async (req: Request, env: ConsoleEnv, rc: RequestContext, s: Signed): Promise<Response> => {
    try {
      if (action === "create") {
        const r = await perform(createApiToken, env, callerOf(rc, s), {
          name: s.params.get("name") ?? "",
          role: s.params.get("role") ?? "",
        });
        return tokensPage(req, env, rc, s, { secret: r.token });
      }
      await perform(revokeApiToken, env, callerOf(rc, s), { name: rc.params.name! });
      return tokensPage(req, env, rc, s, { notice: c(s.v.lang, "saved") });
    } catch (err) {
      return tokensPage(req, env, rc, s, failed(err));
    }
  };
}
