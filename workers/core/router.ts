// The router factory: a worker is a route table over core/ (DESIGN.md §2). It owns what every
// request shares: matching with 404/405 + Allow, the request id, the one error renderer, and one
// structured log line per request carrying the route template, never the raw path or query.

import { describe, errorResponse, E, ApiError } from "./errors";
import { ConfigError } from "./config";

export interface RequestContext {
  readonly url: URL;
  readonly requestId: string;
  /** Path parameters of the matched template (`/admin/clients/:id` → `{ id }`). */
  readonly params: Record<string, string>;
  readonly worker: string;
  /** Fields a handler adds to its log line. Never secrets or personal data. */
  readonly log: { clientId?: string; cause?: string; event?: string };
  waitUntil(p: Promise<unknown>): void;
}

export type Handler<E> = (req: Request, env: E, rc: RequestContext) => Promise<Response> | Response;

export interface Route<E> {
  method: string;
  path: string;
  handler: Handler<E>;
}

interface Compiled<E> {
  template: string;
  segments: string[] | null; // null: static path, matched by the map
  methods: Map<string, Handler<E>>;
}

function compile<E>(routes: readonly Route<E>[]) {
  const statics = new Map<string, Compiled<E>>();
  const patterns: Compiled<E>[] = [];
  for (const r of routes) {
    const dynamic = r.path.includes(":") || r.path.endsWith("*");
    const list = dynamic ? patterns : null;
    let entry = dynamic ? patterns.find((p) => p.template === r.path) : statics.get(r.path);
    if (!entry) {
      entry = { template: r.path, segments: dynamic ? r.path.split("/") : null, methods: new Map() };
      if (list) list.push(entry);
      else statics.set(r.path, entry);
    }
    entry.methods.set(r.method, r.handler);
  }
  return { statics, patterns };
}

function matchPattern(segments: string[], path: string): Record<string, string> | null {
  const parts = path.split("/");
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    if (s === "*") return params;
    const p = parts[i];
    if (p === undefined) return null;
    if (s.startsWith(":")) {
      if (p === "") return null;
      try {
        params[s.slice(1)] = decodeURIComponent(p);
      } catch {
        return null;
      }
    } else if (s !== p) return null;
  }
  return parts.length === segments.length ? params : null;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Builds a worker's fetch handler from its route table. */
export function createWorker<E extends object>(worker: string, routes: readonly Route<E>[]): ExportedHandler<E> {
  const { statics, patterns } = compile(routes);
  return {
    async fetch(req: Request, env: E, ctx: ExecutionContext): Promise<Response> {
      const started = Date.now();
      const url = new URL(req.url);
      const given = req.headers.get("X-Request-Id");
      const requestId = given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
      let entry = statics.get(url.pathname);
      let params: Record<string, string> = {};
      if (!entry) {
        for (const p of patterns) {
          const m = matchPattern(p.segments!, url.pathname);
          if (m) {
            entry = p;
            params = m;
            break;
          }
        }
      }
      const rc: RequestContext = {
        url,
        requestId,
        params,
        worker,
        log: {},
        waitUntil: (p) => ctx.waitUntil(p),
      };
      let res: Response;
      try {
        if (!entry) throw E.notFound();
        const handler = entry.methods.get(req.method) ?? (req.method === "HEAD" ? entry.methods.get("GET") : undefined);
        if (!handler) throw E.methodNotAllowed([...entry.methods.keys()]);
        res = await handler(req, env, rc);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500) rc.log.cause = describe(err);
        else if (err.reason) rc.log.cause = err.reason;
        if (err instanceof ConfigError) rc.log.cause = err.message;
        res = errorResponse(err);
      }
      res = withHeader(res, "X-Request-Id", requestId);
      logLine(env, {
        time: new Date(started).toISOString(),
        worker,
        route: entry?.template ?? "(unmatched)",
        method: req.method,
        status: res.status,
        durationMs: Date.now() - started,
        requestId,
        ...rc.log,
      });
      return res;
    },
  };
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

/** One structured JSON log line. Callers pass only route templates, ids and causes: no personal data. */
export function logLine(env: object, fields: Record<string, unknown>): void {
  if ((env as Record<string, unknown>).LOG_REQUESTS === "false") return;
  console.log(JSON.stringify(fields));
}
