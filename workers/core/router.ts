// The router factory: a worker is a route table over core/ (docs/architecture.md), routed by
// itty-router. Its `before` starts the request context (request id, clock), its `catch` is the one
// error renderer, and its `finally` answers an unmatched request (404, or 405 with Allow) and
// writes the one JSON log line, which names the route template, never the raw path or query.

import { Router, type IRequest } from "itty-router";
import { commonConfig, ConfigError, type CommonVars } from "./config";
import { ApiError, describe, E, errorResponse } from "./errors";
import { redirect } from "./http";
import { LOOPBACK_HOSTS } from "./spec";

export interface RequestContext {
  readonly url: URL;
  readonly requestId: string;
  /** Path parameters of the matched template (`/admin/clients/:id` → `{ id }`), decoded. */
  readonly params: Record<string, string>;
  readonly worker: string;
  /** Fields a handler adds to its log line. Never secrets or personal data. */
  readonly log: { clientId?: string; cause?: string; event?: string };
  waitUntil(p: Promise<unknown>): void;
}

/** A route's handler: a Response finishes the request; nothing lets the next matching route run. */
export type Handler<E> = (req: Request, env: E, rc: RequestContext) => Promise<Response | void> | Response | void;

export interface Route<E> {
  /** An HTTP method, or "ALL" for a step that runs before the routes it precedes (a gate). */
  method: string;
  path: string;
  handler: Handler<E>;
  /** A GET that spends or creates something: HEAD is 405 there, never the GET without a body. */
  effects?: true;
  /** An HTML page for people: plain http is redirected (308) to https instead of refused. */
  page?: true;
}

/** What itty hands our steps: the request with the matched route, its params and our context. */
type Routed = IRequest & { rc: Context; started: number };
type Context = RequestContext & { params: Record<string, string> };

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** `before`: the request id (an acceptable `X-Request-Id`, else a new one) and the context. */
function start(worker: string) {
  return (req: Routed, _env: unknown, ctx: ExecutionContext): Response | undefined => {
    const given = req.headers.get("X-Request-Id");
    req.started = Date.now();
    req.rc = {
      url: new URL(req.url),
      requestId: given && REQUEST_ID.test(given) ? given : crypto.randomUUID(),
      params: {},
      worker,
      log: {},
      waitUntil: (p) => ctx.waitUntil(p),
    };
    // itty would let "/oauth2/token/" match "/oauth2/token": a path is matched exactly.
    const path = req.rc.url.pathname;
    if (path.length > 1 && path.endsWith("/")) return renderError(E.notFound(), req);
  };
}

/** `catch`: the one error renderer. The wire gets the catalogue's message; the log the cause. */
function renderError(err: unknown, req: Routed): Response {
  const log = req.rc?.log;
  if (log) {
    if (!(err instanceof ApiError) || err.status >= 500) log.cause = describe(err);
    else if (err.reason) log.cause = err.reason;
    if (err instanceof ConfigError) log.cause = err.message;
  }
  return errorResponse(err);
}

/** HTTPS only (spec §1), before anything is read: pages 308 to https; loopback http in DEV_MODE. */
function insecure(url: URL, env: CommonVars, page: boolean): Response | undefined {
  if (url.protocol !== "http:") return undefined;
  if (LOOPBACK_HOSTS.has(url.hostname) && commonConfig(env).devMode) return undefined;
  if (!page) throw E.httpsRequired();
  const https = new URL(url);
  https.protocol = "https:";
  return redirect(308, https.href);
}

/** A matched route's step: HTTPS, the path parameters decoded (undecodable: 404), then the handler. */
function step<E extends CommonVars>(r: Route<E>) {
  const handler = r.handler;
  return (req: Routed, env: E): Promise<Response | void> | Response | void => {
    const refused = insecure(req.rc.url, env, r.page === true);
    if (refused) return refused;
    for (const [k, v] of Object.entries(req.params ?? {})) {
      try {
        req.rc.params[k] = decodeURIComponent(v);
      } catch {
        throw E.notFound();
      }
    }
    return handler(req as unknown as Request, env, req.rc);
  };
}

/** Builds a worker's fetch handler from its route table. GET routes without effects also answer HEAD. */
export function createWorker<E extends CommonVars>(worker: string, routes: readonly Route<E>[]): ExportedHandler<E> {
  const table = new Map<string, Set<string>>();
  for (const r of routes) {
    if (r.method === "ALL") continue; // a gate: it allows no method of its own
    const methods = table.get(r.path) ?? new Set<string>();
    methods.add(r.method);
    table.set(r.path, methods);
  }
  const router = Router<Routed, [E, ExecutionContext]>({
    before: [start(worker)],
    catch: renderError,
    finally: [
      (res: Response | undefined, req: Routed) => res ?? renderError(unmatched(req.rc.url.pathname), req),
      (res: Response, req: Routed, env: E) => finish(res, req, env),
    ],
  });
  const paths: { path: string; regex: RegExp }[] = [];
  for (const r of routes) {
    router[r.method.toLowerCase()](r.path, step(r));
    if (r.method === "GET" && !r.effects && !table.get(r.path)!.has("HEAD")) router.head(r.path, step(r));
  }
  // itty keeps [method, regex, handlers, path] per registered route: the same regexes decide 405.
  for (const [, regex, , path] of router.routes) {
    if (path !== undefined && table.has(path) && !paths.some((p) => p.path === path)) paths.push({ path, regex });
  }

  /** No route for this method: 405 with Allow when the path exists, else 404. */
  function unmatched(pathname: string): ApiError {
    const hit = paths.find((p) => p.regex.test(pathname));
    return hit ? E.methodNotAllowed([...table.get(hit.path)!]) : E.notFound();
  }

  return { fetch: (req, env, ctx) => router.fetch(req as unknown as Routed, env, ctx) as Promise<Response> };
}

/** `finally`: the request id on the answer, then the request's one log line. */
function finish<E extends CommonVars>(res: Response, req: Routed, env: E): Response {
  const out = withHeader(res, "X-Request-Id", req.rc.requestId);
  if (!logsOn(env)) return out;
  logLine(env, {
    time: new Date(req.started).toISOString(),
    worker: req.rc.worker,
    route: typeof req.route === "string" ? req.route : "(unmatched)",
    method: req.method,
    status: out.status,
    durationMs: Date.now() - req.started,
    requestId: req.rc.requestId,
    ...req.rc.log,
  });
  return out;
}

function withHeader(res: Response, name: string, value: string): Response {
  try {
    res.headers.set(name, value);
    return res;
  } catch {
    // immutable headers (a fetched response passed through): copy once
    const copy = new Response(res.body, res);
    copy.headers.set(name, value);
    return copy;
  }
}

/** Whether request log lines are on (a malformed variable was already answered: on). */
function logsOn(env: CommonVars): boolean {
  try {
    return commonConfig(env).logRequests;
  } catch {
    return true;
  }
}

/** One structured JSON log line. Callers pass only route templates, ids and causes: no personal data. */
export const logLine = (env: CommonVars, fields: Record<string, unknown>): void =>
  void (logsOn(env) && console.log(JSON.stringify(fields)));
