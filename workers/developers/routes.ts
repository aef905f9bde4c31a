// /developers: the developer console (docs/developers.md). GET /developers without a session is its
// sign-in (the service's own identify and code steps, purpose ./purpose.ts); with one, the
// developer's apps. Every other page, form and API call goes through ./gate.ts. Served by the
// developers' route worker (workers/consoles/developers.ts) and the all-in-one worker.

import type { Handler, Route } from "../core/router";
import { door } from "../frame/signin";
import { DEVELOPER_SESSION } from "../provider/store/console-session";
import { api, appPage, appsPage, createPage, pages } from "./apps";
import { statsApi, statsCsvFile, statsPage } from "./stats";
import { inviteForms, teamApi, teamForms } from "./team";
import { devApi, devPage, MAX_BODY_BYTES, type DevEnv, type DevHandler } from "./gate";
import { d } from "./i18n";
import { developerSigninPage } from "./purpose";

/**
 * The developer console's door (workers/frame/signin.ts): GET|POST /developers, a step of its
 * sign-in, the sign-in itself, else the apps; POST /developers/sign-out; the way back from an
 * action's address.
 */
const { signIn, root, signOut, back } = door<DevEnv>({
  page: developerSigninPage,
  session: DEVELOPER_SESSION,
  signOutBytes: () => MAX_BODY_BYTES,
  first: (req, env, rc) => apps(req, env, rc),
  signedOut: (lang) => d(lang, "signedOut"),
});

const page = (h: DevHandler) => devPage(h, signIn);

const apps: Handler<DevEnv> = page(appsPage);

const APP = "/developers/apps/:id";
const team = teamForms(
  (req, env, rc, s, notice) => appPage(req, env, rc, s, { notice }),
  // one who left: their apps, shown as /developers (its menu entry and language switch; the app's
  // own addresses are no longer theirs)
  (req, env, rc, s, notice) => appsPage(req, env, rc, { ...s, v: { ...s.v, path: "/developers" } }, { notice }),
);
const invites = inviteForms((req, env, rc, s, notice) => appsPage(req, env, rc, s, { notice }));

/** Every page and form of the developer console. */
export const pageTable: Route<DevEnv>[] = [
  { method: "GET", path: "/developers", handler: root, effects: true, page: true },
  { method: "POST", path: "/developers", handler: root, page: true },
  { method: "POST", path: "/developers/sign-out", handler: signOut, page: true },
  { method: "POST", path: "/developers/apps", handler: page(createPage), page: true },
  { method: "GET", path: APP, handler: page(appPage), page: true },
  { method: "POST", path: APP, handler: page(pages.update), page: true },
  { method: "POST", path: `${APP}/test-numbers`, handler: page(pages.addTestNumber), page: true },
  { method: "POST", path: `${APP}/test-numbers/:phone/renew`, handler: page(pages.renewTestNumber), page: true },
  { method: "POST", path: `${APP}/test-numbers/:phone/remove`, handler: page(pages.removeTestNumber), page: true },
  { method: "POST", path: `${APP}/review`, handler: page(pages.submitReview), page: true },
  { method: "POST", path: `${APP}/review/withdraw`, handler: page(pages.withdrawReview), page: true },
  { method: "POST", path: `${APP}/rotate-secret`, handler: page(pages.rotate), page: true },
  { method: "POST", path: `${APP}/events/test`, handler: page(pages.testEvent), page: true },
  { method: "POST", path: `${APP}/events/resume`, handler: page(pages.resumeEvents), page: true },
  { method: "POST", path: `${APP}/stream/pause`, handler: page(pages.pauseStream), page: true },
  { method: "POST", path: `${APP}/stream/resume`, handler: page(pages.resumeStream), page: true },
  { method: "POST", path: `${APP}/team`, handler: page(team.invite), page: true },
  { method: "POST", path: `${APP}/team/invites/:invite/withdraw`, handler: page(team.withdraw), page: true },
  { method: "POST", path: `${APP}/team/:member/remove`, handler: page(team.remove), page: true },
  { method: "POST", path: `${APP}/team/:member/role`, handler: page(team.role), page: true },
  { method: "POST", path: "/developers/invites/:id/accept", handler: page(invites.accept), page: true },
  { method: "POST", path: "/developers/invites/:id/decline", handler: page(invites.decline), page: true },
  { method: "GET", path: "/developers/invites/*", handler: back(() => "/developers"), page: true },
  { method: "GET", path: "/developers/apps", handler: back(() => "/developers"), page: true },
  { method: "GET", path: `${APP}/stats`, handler: page(statsPage), page: true },
  { method: "GET", path: `${APP}/stats.csv`, handler: page(statsCsvFile), page: true },
  { method: "GET", path: `${APP}/*`, handler: back((rc) => `/developers/apps/${rc.params.id}`), page: true },
  { method: "GET", path: "/developers/sign-out", handler: back(() => "/developers"), page: true },
];

const API = "/developers/api/apps";

/** The same actions as JSON under the developer's session (docs/developers.md "API"). */
export const apiTable: Route<DevEnv>[] = [
  { method: "GET", path: API, handler: devApi(api.list) },
  { method: "POST", path: API, handler: devApi(api.create) },
  { method: "GET", path: `${API}/:id`, handler: devApi(api.read) },
  { method: "PATCH", path: `${API}/:id`, handler: devApi(api.update) },
  { method: "GET", path: `${API}/:id/test-numbers`, handler: devApi(api.testNumbers) },
  { method: "POST", path: `${API}/:id/test-numbers`, handler: devApi(api.addTestNumber) },
  { method: "POST", path: `${API}/:id/test-numbers/:phone/renew`, handler: devApi(api.renewTestNumber) },
  { method: "DELETE", path: `${API}/:id/test-numbers/:phone`, handler: devApi(api.removeTestNumber) },
  { method: "GET", path: `${API}/:id/review`, handler: devApi(api.review) },
  { method: "POST", path: `${API}/:id/review`, handler: devApi(api.submitReview) },
  { method: "DELETE", path: `${API}/:id/review`, handler: devApi(api.withdrawReview) },
  { method: "POST", path: `${API}/:id/rotate-secret`, handler: devApi(api.rotate) },
  { method: "GET", path: `${API}/:id/events`, handler: devApi(api.events) },
  { method: "POST", path: `${API}/:id/events/test`, handler: devApi(api.testEvent) },
  { method: "POST", path: `${API}/:id/events/resume`, handler: devApi(api.resumeEvents) },
  { method: "GET", path: `${API}/:id/stream`, handler: devApi(api.stream) },
  { method: "POST", path: `${API}/:id/stream/pause`, handler: devApi(api.pauseStream) },
  { method: "POST", path: `${API}/:id/stream/resume`, handler: devApi(api.resumeStream) },
  { method: "GET", path: `${API}/:id/team`, handler: devApi(teamApi.read!) },
  { method: "POST", path: `${API}/:id/team`, handler: devApi(teamApi.invite!) },
  { method: "DELETE", path: `${API}/:id/team/invites/:invite`, handler: devApi(teamApi.withdraw!) },
  { method: "DELETE", path: `${API}/:id/team/:member`, handler: devApi(teamApi.remove!) },
  { method: "PATCH", path: `${API}/:id/team/:member`, handler: devApi(teamApi.role!) },
  { method: "GET", path: `${API}/:id/stats`, handler: devApi(statsApi) },
  { method: "GET", path: "/developers/api/invites", handler: devApi(teamApi.invites!) },
  { method: "POST", path: "/developers/api/invites/:id/accept", handler: devApi(teamApi.accept!) },
  { method: "POST", path: "/developers/api/invites/:id/decline", handler: devApi(teamApi.decline!) },
];

export const routes: Route<DevEnv>[] = [...apiTable, ...pageTable];
