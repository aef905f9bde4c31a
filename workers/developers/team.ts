// An app's team (docs/developers.md "Team"): its owners invite people by number with a role
// (`owner`, `member`); an invitation lasts 7 days and is taken only by the person who proves that
// number and accepts it on /developers, never silently. A membership is the person's (their
// directory id) and ends when their number passes to another person; an app always keeps an owner.
// Nothing here looks a number up: an invitation is stored under a keyed hash, shown masked.

import { ApiError, E } from "../core/errors";
import { html, type SafeHtml } from "../core/html";
import { json } from "../core/http";
import type { RequestContext } from "../core/router";
import { normalizePhone } from "../core/spec";
import { hidden, when, type Viewer } from "../frame/layout";
import { maskPhone } from "../provider/signin/index";
import { getClient, sealKeyVar } from "../provider/store/clients";
import {
  acceptTeamInvite,
  declineTeamInvite,
  dropTeamInvite,
  invitesFor,
  isTeamRole,
  memberKey,
  putTeamInvite,
  removeMember,
  roleOn,
  setMemberRole,
  teamOf,
  type TeamRole,
} from "../provider/store/developers";
import { isAppTestNumber } from "../provider/store/directory/index";
import { audit } from "../provider/store/one-time/index";
import { onlyFields } from "../admin/steps";
import { actorOf, teamApp, type DevEnv, type DevSigned } from "./gate";
import { d, type Lang } from "./i18n";

const iso = (ms: number) => new Date(ms).toISOString();

/** The app the path names and the caller's role on its team (404 for anyone off it). */
async function onTeam(
  env: DevEnv,
  rc: RequestContext,
  s: DevSigned,
): Promise<{ clientId: string; name: string; role: TeamRole }> {
  const { app, role } = await teamApp(env, rc, s);
  return { clientId: app.clientId, name: app.name, role };
}

function ownerOnly(s: DevSigned, role: TeamRole): void {
  if (role !== "owner") throw new ApiError("access_denied", d(s.v.lang, "ownerOnly"), { status: 403 });
}

export async function teamView(env: DevEnv, clientId: string) {
  const { members, invites } = await teamOf(env, clientId);
  return {
    members: members.map((m) => ({ member: m.developer, masked: m.masked, role: m.role, added_at: iso(m.addedAt) })),
    invites: invites.map((i) => ({ invite: i.phoneKey, masked: i.masked, role: i.role, expires_at: iso(i.expiresAt) })),
  };
}

/** An owner invites a number with a role: the invitation, masked. */
async function invite(env: DevEnv, rc: RequestContext, s: DevSigned, body: Record<string, unknown>) {
  const { clientId, role: mine } = await onTeam(env, rc, s);
  ownerOnly(s, mine);
  onlyFields(body, ["phone", "role"]);
  const phone = typeof body.phone === "string" ? normalizePhone(body.phone) : undefined;
  if (!phone) throw E.invalidBecause("phone", "must be a mobile number: 01X then 7 or 8 digits");
  if (isAppTestNumber(phone)) throw E.invalidBecause("phone", "a test number cannot be on a team");
  const role = body.role ?? "member";
  if (!isTeamRole(role)) throw E.invalidBecause("role", "must be owner or member");
  const made = await putTeamInvite(env, {
    clientId,
    phoneKey: await memberKey(sealKeyVar(env), phone),
    role,
    masked: maskPhone(phone),
    invitedBy: actorOf(s.dev),
  });
  await audit(env, "team.invited", clientId, "ok", { actor: actorOf(s.dev), role });
  return { invite: made.phoneKey, masked: made.masked, role: made.role, expires_at: iso(made.expiresAt) };
}

async function withdraw(env: DevEnv, rc: RequestContext, s: DevSigned) {
  const { clientId, role } = await onTeam(env, rc, s);
  ownerOnly(s, role);
  if (!(await dropTeamInvite(env, clientId, rc.params.invite ?? ""))) throw E.noSuch("invitation");
  await audit(env, "team.invite_withdrawn", clientId, "ok", { actor: actorOf(s.dev) });
}

/** The member the path names (by their developer id), on the caller's app. */
async function memberAt(env: DevEnv, clientId: string, rc: RequestContext) {
  const m = (await teamOf(env, clientId)).members.find((x) => x.developer === rc.params.member);
  if (!m) throw E.noSuch("member");
  return m;
}

/** An owner removes a member, or a member leaves; never the last owner. Returns the app's name and whether the caller left. */
async function remove(env: DevEnv, rc: RequestContext, s: DevSigned): Promise<{ name: string; left: boolean }> {
  const { clientId, name, role } = await onTeam(env, rc, s);
  const m = await memberAt(env, clientId, rc);
  const left = m.subscriberId === s.dev.subscriberId;
  if (!left) ownerOnly(s, role);
  const r = await removeMember(env, clientId, m.subscriberId);
  if (r === "last_owner") throw E.invalidBecause("member", "an app always keeps an owner");
  if (r === "none") throw E.noSuch("member");
  await audit(env, "team.removed", clientId, "ok", { actor: actorOf(s.dev) });
  return { name, left };
}

async function changeRole(env: DevEnv, rc: RequestContext, s: DevSigned, body: Record<string, unknown>) {
  const { clientId, role } = await onTeam(env, rc, s);
  ownerOnly(s, role);
  onlyFields(body, ["role"]);
  if (!isTeamRole(body.role)) throw E.invalidBecause("role", "must be owner or member");
  const m = await memberAt(env, clientId, rc);
  const r = await setMemberRole(env, clientId, m.subscriberId, body.role);
  if (r === "last_owner") throw E.invalidBecause("role", "an app always keeps an owner");
  if (r === "none") throw E.noSuch("member");
  await audit(env, "team.role_changed", clientId, "ok", { actor: actorOf(s.dev), role: body.role });
}

/** The invitations of the signed-in person's number, with their apps' names. */
export async function myInvites(env: DevEnv, s: DevSigned) {
  const list = await invitesFor(env, s.dev.phoneKey);
  const named = await Promise.all(list.map(async (i) => ({ i, c: await getClient(env, i.clientId) })));
  return named
    .filter((x) => x.c !== null)
    .map((x) => ({ client_id: x.i.clientId, name: x.c!.name, role: x.i.role, expires_at: iso(x.i.expiresAt) }));
}

/** The person accepts an invitation of their number: they join the team. */
async function accept(env: DevEnv, rc: RequestContext, s: DevSigned) {
  const id = rc.params.id ?? "";
  const m = await acceptTeamInvite(env, id, s.dev);
  if (!m) throw E.noSuch("invitation");
  rc.log.clientId = id;
  await audit(env, "team.joined", id, "ok", { actor: actorOf(s.dev), role: m.role });
  return { client_id: id, role: m.role };
}

async function decline(env: DevEnv, rc: RequestContext, s: DevSigned) {
  const id = rc.params.id ?? "";
  if (!(await declineTeamInvite(env, id, s.dev.phoneKey))) throw E.noSuch("invitation");
  await audit(env, "team.declined", id, "ok", { actor: actorOf(s.dev) });
}

type H = (req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) => Promise<Response>;

export const teamApi: Record<string, H> = {
  read: async (_q, env, rc, s) => json(await teamView(env, (await onTeam(env, rc, s)).clientId)),
  invite: async (_q, env, rc, s) => json(await invite(env, rc, s, s.body), 201),
  withdraw: async (_q, env, rc, s) => (await withdraw(env, rc, s), json({ deleted: true })),
  remove: async (_q, env, rc, s) => (await remove(env, rc, s), json({ deleted: true })),
  role: async (_q, env, rc, s) => (await changeRole(env, rc, s, s.body), json(await teamView(env, rc.params.id!))),
  invites: async (_q, env, _rc, s) => json({ invites: await myInvites(env, s) }),
  accept: async (_q, env, rc, s) => json(await accept(env, rc, s)),
  decline: async (_q, env, rc, s) => (await decline(env, rc, s), json({ deleted: true })),
};

type Then = (req: Request, env: DevEnv, rc: RequestContext, s: DevSigned, notice: string) => Promise<Response>;

/**
 * The form actions, each answered by `then` (the page it belongs to, with its notice); one who
 * leaves a team is answered by `gone` (a page they still see: the app's is no longer theirs).
 */
export function teamForms(then: Then, gone: Then) {
  const run =
    (f: (env: DevEnv, rc: RequestContext, s: DevSigned) => Promise<unknown>): H =>
    async (req, env, rc, s) => (await f(env, rc, s), then(req, env, rc, s, d(s.v.lang, "saved")));
  return {
    invite: run((env, rc, s) =>
      invite(env, rc, s, { phone: s.params.get("phone") ?? "", role: s.params.get("role") ?? "member" }),
    ),
    withdraw: run(withdraw),
    remove: (async (req, env, rc, s) => {
      const { name, left } = await remove(env, rc, s);
      return left
        ? gone(req, env, rc, s, d(s.v.lang, "left", { app: name }))
        : then(req, env, rc, s, d(s.v.lang, "saved"));
    }) as H,
    role: run((env, rc, s) => changeRole(env, rc, s, { role: s.params.get("role") ?? "" })),
  };
}

/** The team section of an app's page. */
export function teamSection(
  v: Viewer,
  base: string,
  team: Awaited<ReturnType<typeof teamView>>,
  owner: boolean,
  /** The signed-in developer's id: their own row offers to leave. */
  me: string,
): SafeHtml {
  const L: Lang = v.lang;
  const button = (path: string, label: string, extra: SafeHtml | string = "") =>
    html`<form class="inline" method="post" action="${base}${path}">${hidden(v)}${extra}<button type="submit" class="secondary">${label}</button></form>`;
  const roleName = (r: string) => d(L, r === "owner" ? "roleOwner" : "roleMember");
  const owners = team.members.filter((m) => m.role === "owner").length;
  // what each row offers: nothing the service would refuse (the last owner keeps the app), and
  // every member their own way out
  const actions = (m: (typeof team.members)[number]) => {
    if (m.role === "owner" && owners === 1) return owner ? html`<p class="hint">${d(L, "lastOwner")}</p>` : html``;
    const leave = m.member === me ? button(`/team/${m.member}/remove`, d(L, "leave")) : undefined;
    if (!owner) return leave ?? html``;
    const role = button(
      `/team/${m.member}/role`,
      d(L, m.role === "owner" ? "makeMember" : "makeOwner"),
      html`<input type="hidden" name="role" value="${m.role === "owner" ? "member" : "owner"}">`,
    );
    return html`<div class="actions">${role} ${leave ?? button(`/team/${m.member}/remove`, d(L, "remove"))}</div>`;
  };
  const rows = team.members.map(
    (m) => html`<tr><td>${m.masked}</td><td>${roleName(m.role)}</td><td>${actions(m)}</td></tr>`,
  );
  const invites = team.invites.map(
    (i) =>
      html`<tr><td>${i.masked}</td><td>${roleName(i.role)}</td><td>${when(i.expires_at, L)}</td><td>${owner ? button(`/team/invites/${i.invite}/withdraw`, d(L, "withdraw")) : ""}</td></tr>`,
  );
  return html`<h2>${d(L, "team")}</h2>
<table><caption>${d(L, "team")}</caption><thead><tr><th scope="col">${d(L, "phone")}</th><th scope="col">${d(L, "role")}</th><th scope="col"><span class="skip">${d(L, "remove")}</span></th></tr></thead><tbody>${rows}</tbody></table>
${invites.length ? html`<table><caption>${d(L, "pendingInvites")}</caption><thead><tr><th scope="col">${d(L, "phone")}</th><th scope="col">${d(L, "role")}</th><th scope="col">${d(L, "expires")}</th><th scope="col"><span class="skip">${d(L, "withdraw")}</span></th></tr></thead><tbody>${invites}</tbody></table>` : ""}
${
  owner
    ? html`<form class="card" method="post" action="${base}/team">${hidden(v)}<label>${d(L, "invitePhone")}<input type="tel" name="phone" required autocomplete="off" inputmode="tel"></label>
<label>${d(L, "role")}<select name="role"><option value="member">${d(L, "roleMember")}</option><option value="owner">${d(L, "roleOwner")}</option></select></label>
<p class="hint">${d(L, "inviteHint")}</p><p><button type="submit">${d(L, "invite")}</button></p></form>`
    : ""
}`;
}

/** The invitations section of the apps page, with accept and decline. */
export function invitesSection(v: Viewer, invites: Awaited<ReturnType<typeof myInvites>>): SafeHtml {
  const L = v.lang;
  if (invites.length === 0) return html``;
  const rows = invites.map(
    (i) =>
      html`<tr><td>${i.name}</td><td>${d(L, i.role === "owner" ? "roleOwner" : "roleMember")}</td><td>${when(i.expires_at, L)}</td><td><form class="inline" method="post" action="/developers/invites/${i.client_id}/accept">${hidden(v)}<button type="submit">${d(L, "accept")}</button></form> <form class="inline" method="post" action="/developers/invites/${i.client_id}/decline">${hidden(v)}<button type="submit" class="secondary">${d(L, "decline")}</button></form></td></tr>`,
  );
  return html`<h2>${d(L, "invitations")}</h2><table><caption>${d(L, "invitations")}</caption><thead><tr><th scope="col">${d(L, "name")}</th><th scope="col">${d(L, "role")}</th><th scope="col">${d(L, "expires")}</th><th scope="col"><span class="skip">${d(L, "accept")}</span></th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** The invitee's accept and decline as forms: the apps page after. */
export function inviteForms(
  then: (req: Request, env: DevEnv, rc: RequestContext, s: DevSigned, notice: string) => Promise<Response>,
) {
  return {
    accept: (async (req, env, rc, s) => (await accept(env, rc, s), then(req, env, rc, s, d(s.v.lang, "joined")))) as H,
    decline: (async (req, env, rc, s) => (
      await decline(env, rc, s),
      then(req, env, rc, s, d(s.v.lang, "declined"))
    )) as H,
  };
}
