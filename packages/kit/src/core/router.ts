// The router factory: a worker is a route table over core/ (docs/architecture.md). A compiler
// turns the table into regexes (the kit's own, below, for `/fixed/paths` and `:name` segments; the
// service's workers pass itty-router's); each request is matched against the request context's
// path, its steps awaited in order until one answers. Around them: the context (path, query, the
// URL parsed on first use), the one error renderer, 404 or 405 with Allow for an unmatched request,
// and the one JSON log line, which names the route template, never the raw path or query.

import { commonConfig, ConfigError, type CommonVars } from "./config.js";
import { ApiError, describe, E, errorResponse } from "./errors.js";
import { redirect } from "./http.js";
import { LOOPBACK_HOSTS } from "./spec.js";

export interface RequestContext {
  /** The request's URL, parsed on first use (most API requests need only `path` and `search`). */
  readonly url: URL;
  /** The URL's path, as `url.pathname`. */
  readonly path: string;
  /** The URL's query with its `?`, or "" (as `url.search`). */
  readonly search: string;
  /**
   * The caller's `X-Request-Id` when acceptable (echoed on the answer), else Cloudflare's `cf-ray`,
   * else a new UUID: what the log line names the request by. Read only when needed.
   */
  readonly requestId: string;
  /** Path parameters of the matched template (`/admin/clients/:id` → `{ id }`), decoded. */
  readonly params: Record<string, string>;
  /** The matched route's template (`/admin/clients/:id`), never the raw path; undefined before a match. */
  readonly route?: string | undefined;
  readonly worker: string;
  /** Fields a handler adds to its log line. Never secrets or personal data. */
  readonly log: LogFields;
  waitUntil(p: Promise<unknown>): void;
}

type LogFields = { clientId?: string; cause?: string; event?: string };

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

export type Step<E> = (
  req: Request,
  env: E,
  rc: Context,
  groups: Record<string, string> | undefined,
) => ReturnType<Handler<E>>;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * The path and query (`pathname`, `search`) of a serialized URL. The URL workerd hands a worker is
 * already serialized by the URL parser (scheme, `//`, the authority, the path, then `?` and `#`), so
 * both are slices of the string; the full parse costs a few times more (docs/benchmarks.md).
 */
export function pathAndQuery(href: string): [path: string, search: string] {
  const start = href.indexOf("/", href.indexOf("//") + 2);
  if (start < 0) return ["/", ""];
  let end = href.indexOf("#", start);
  if (end < 0) end = href.length;
  const q = href.indexOf("?", start);
  if (q < 0 || q > end) return [href.slice(start, end), ""];
  return [href.slice(start, q), q === end - 1 ? "" : href.slice(q, end)];
}

/** A serialized URL's `hostname`, read from its text: the HTTPS check needs no parse. */
export function hostOf(href: string): string {
  return /^[^:/]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)/.exec(href)?.[1] ?? "";
}

/** The request's context; the URL's full parse waits until a handler asks for `url`. */
export class Context implements RequestContext {
  readonly path: string;
  readonly search: string;
  /** The caller's acceptable `X-Request-Id` (echoed on the answer), or null. */
  readonly given: string | null;
  readonly params: Record<string, string> = {};
  readonly log: LogFields = { clientId: undefined, cause: undefined, event: undefined }; // one shape however filled
  route: string | undefined = undefined;
  readonly started = Date.now();
  private parsed: URL | undefined = undefined;
  private id: string | undefined = undefined;

  constructor(
    readonly worker: string,
    private readonly req: Request,
    private readonly ctx: ExecutionContext,
  ) {
    [this.path, this.search] = pathAndQuery(req.url);
    const given = req.headers.get("X-Request-Id");
    this.given = given !== null && REQUEST_ID.test(given) ? given : null;
  }

  get url(): URL {
    return (this.parsed ??= new URL(this.req.url));
  }

  get requestId(): string {
    return (this.id ??= this.given ?? this.req.headers.get("cf-ray") ?? crypto.randomUUID());
  }

  waitUntil(p: Promise<unknown>): void {
    this.ctx.waitUntil(p);
  }
}

/** The one error renderer. The wire gets the catalogue's message; the log the cause. */
function renderError(err: unknown, rc: Context): Response {
  if (!(err instanceof ApiError) || err.status >= 500) rc.log.cause = describe(err);
  else if (err.reason) rc.log.cause = err.reason;
  if (err instanceof ConfigError) rc.log.cause = err.message;
  return errorResponse(err);
}

/** A template with no parameter or wildcard (`/`, or segments of unreserved characters), and its match. */
const [LITERAL_PATH, LITERAL_MATCH] = [/^(?:\/|(?:\/[A-Za-z0-9._~-]+)+)$/, { groups: undefined }];

/** HTTPS only (spec §1), before anything is read: pages 308 to https; loopback http in DEV_MODE. */
function insecure(req: Request, rc: Context, env: CommonVars, page: boolean): Response | undefined {
  if (!req.url.startsWith("http:")) return undefined;
  if (LOOPBACK_HOSTS.has(hostOf(req.url)) && commonConfig(env).devMode) return undefined;
  if (!page) throw E.httpsRequired();
  return redirect(308, `https:${rc.url.href.slice("http:".length)}`);
}

/** A matched route's step: HTTPS, the path parameters decoded (undecodable: 404), then the handler. */
function step<E extends CommonVars>(r: Route<E>): Step<E> {
  return (req, env, rc, groups) => {
    const refused = insecure(req, rc, env, r.page === true);
    if (refused) return refused;
    if (groups)
      for (const k in groups) {
        try {
          rc.params[k] = decodeURIComponent(groups[k]!);
        } catch {
          throw E.notFound();
        }
      }
    return r.handler(req, env, rc);
  };
}

/** A compiled route: its method, the regex of its path, its steps and its template. */
export type CompiledRoute<E> = [method: string, regex: RegExp, steps: Step<E>[], path: string];

/** Turns `(method, path, step)` registrations, in order, into compiled routes. */
export type RouteCompiler = <E>(registrations: [method: string, path: string, step: Step<E>][]) => CompiledRoute<E>[];

/**
 * The kit's compiler: a path is literal text and `:name` segments (one non-empty segment each,
 * captured by name). A trailing slash is refused before matching (see `createWorker`).
 */
export const compileRoutes: RouteCompiler = (registrations) =>
  registrations.map(([method, path, s]) => {
    const source = path
      .split("/")
      .map((seg) => (seg.startsWith(":") ? `(?<${seg.slice(1)}>[^/]+)` : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
      .join("/");
    return [method.toUpperCase(), new RegExp(`^${source}$`), [s], path];
  });

/**
 * Builds a worker's fetch handler from its route table. GET routes without effects also answer
 * HEAD. `compile` turns the table into regexes (default: `compileRoutes`).
 */
export function createWorker<E extends CommonVars>(
  worker: string,
  routes: readonly Route<E>[],
  compile: RouteCompiler = compileRoutes,
): ExportedHandler<E> {
  const table = new Map<string, Set<string>>();
  for (const r of routes) {
    if (r.method === "ALL") continue; // a gate: it allows no method of its own
    const methods = table.get(r.path) ?? new Set<string>();
    methods.add(r.method);
    table.set(r.path, methods);
  }
  const registrations: [string, string, Step<E>][] = [];
  for (const r of routes) {
    registrations.push([r.method, r.path, step(r)]);
    if (r.method === "GET" && !r.effects && !table.get(r.path)!.has("HEAD"))
      registrations.push(["HEAD", r.path, step(r)]);
  }
  const compiled = compile(registrations);
  const paths = compiled.filter(([, , , path], i) => table.has(path) && compiled.findIndex((c) => c[3] === path) === i);
  // a plain template matches exactly its text (a trailing slash is refused first): no regex run
  const literal = compiled.map(([, , , path]) => (LITERAL_PATH.test(path) ? path : null));

  /** The steps of every route matching the method and path, in order, until one answers. */
  async function dispatch(req: Request, env: E, rc: Context): Promise<Response | void> {
    for (let i = 0; i < compiled.length; i++) {
      const [method, regex, steps, path] = compiled[i]!;
      if (method !== req.method && method !== "ALL") continue;
      const m = literal[i] === null ? regex.exec(rc.path) : rc.path === literal[i] ? LITERAL_MATCH : null;
      if (!m) continue;
      rc.route = path;
      for (let j = 0; j < steps.length; j++) {
        const res = await steps[j]!(req, env, rc, m.groups);
        if (res) return res;
      }
    }
  }

  /** Nothing answered: 405 with Allow when the path exists for other methods only, else 404. */
  function unmatched(pathname: string, method: string): ApiError {
    const allow = table.get(paths.find(([, regex]) => regex.test(pathname))?.[3] ?? "");
    return allow && !allow.has(method) ? E.methodNotAllowed([...allow]) : E.notFound();
  }

  return {
    async fetch(req, env, ctx) {
      const rc = new Context(worker, req, ctx);
      const path = rc.path;
      let res: Response;
      try {
        // a compiler may let "/oauth2/token/" match "/oauth2/token" (itty does): a path is matched exactly.
        if (path.length > 1 && path.endsWith("/")) throw E.notFound();
        res = (await dispatch(req, env, rc)) ?? renderError(unmatched(path, req.method), rc);
      } catch (err) {
        res = renderError(err, rc);
      }
      return finish(res, req, env, rc);
    },
  };
}

/** The caller's request id back on the answer, then the request's one log line. */
function finish<E extends CommonVars>(res: Response, req: Request, env: E, rc: Context): Response {
  const out = rc.given === null ? res : withHeader(res, "X-Request-Id", rc.given);
  if (!logsOn(env)) return out;
  logLine(env, {
    time: new Date(rc.started).toISOString(),
    worker: rc.worker,
    route: rc.route ?? "(unmatched)",
    method: req.method,
    status: out.status,
    durationMs: Date.now() - rc.started,
    requestId: rc.requestId,
    ...rc.log,
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
