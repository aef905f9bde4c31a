// The one error catalogue (spec §7, docs/architecture.md §4.1). Handlers throw an ApiError made by one of the
// factories below; `errorResponse` is the only place that writes an error body on the wire.

/** Wire error codes: spec §7 plus the rate-limit code of docs/architecture.md §4.1. */
export type ErrorCode =
  | "invalid_request"
  | "invalid_grant"
  | "invalid_client"
  | "authentication_failed"
  | "not_found"
  | "method_not_allowed"
  | "server_error"
  | "too_many_requests"
  | "access_denied";

export interface ApiErrorOptions {
  status: number;
  headers?: Record<string, string>;
  /** Internal reason for the log line; never sent on the wire. */
  cause?: string;
}

/** A catalogue error: `code` and `message` go on the wire, `cause` only to the log. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly reason: string | undefined;

  constructor(code: ErrorCode, message: string, opts: ApiErrorOptions) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = opts.status;
    this.headers = opts.headers ?? {};
    this.reason = opts.cause;
  }
}

/**
 * How a client-authentication failure is answered: "basic" where the client authenticates with
 * HTTP Basic (401 and a challenge), "request" where it is only named in the request (400).
 */
export type ClientAuthAnswer = "basic" | "request";

function clientAuthStatus(answer: ClientAuthAnswer): ApiErrorOptions {
  return answer === "request"
    ? { status: 400 }
    : { status: 401, headers: { "WWW-Authenticate": 'Basic realm="phone-login", charset="UTF-8"' } };
}

/** Error factories, one line per catalogue entry. */
export const E = {
  missing: (item: string, cause?: string) =>
    new ApiError("invalid_request", `A required item ${item} is missing.`, { status: 400, cause }),
  invalid: (item: string, cause?: string) =>
    new ApiError("invalid_request", `The value of ${item} is not valid.`, { status: 400, cause }),
  duplicated: (item: string) =>
    new ApiError("invalid_request", `The value of ${item} is not valid: it was sent more than once.`, {
      status: 400,
      cause: "duplicated parameter",
    }),
  /** The same parameter in the query and the body with different values. */
  conflicting: (item: string) =>
    new ApiError("invalid_request", `The value of ${item} is not valid: the query and the body differ.`, {
      status: 400,
      cause: "parameter differs between query and body",
    }),
  /** An http: request to a public host (spec §1: HTTPS only): nothing was read or done. */
  httpsRequired: () =>
    new ApiError("invalid_request", "HTTPS is required: send this request to the https:// address.", {
      status: 400,
      cause: "plain http",
    }),
  tooLarge: () =>
    new ApiError("invalid_request", "The request body is too large.", { status: 413, cause: "body over limit" }),
  /** A URI whose query is longer than a redirect may copy. */
  uriTooLong: (cause: string) =>
    new ApiError("invalid_request", "The request URI is too long.", { status: 414, cause }),
  /** The client went away while sending its body: logged as a client abort, not a server error. */
  aborted: () =>
    new ApiError("invalid_request", "The request body could not be read.", {
      status: 400,
      cause: "client abort: body not received",
    }),
  redirectMismatch: (url: string) =>
    new ApiError("invalid_grant", `The redirect address ${url} matches none of the registered values.`, {
      status: 400,
    }),
  /** spec §4.2: the reference answers 500 server_error naming the code; rfc6749 style is 400 invalid_grant. */
  invalidCode: (style: "reference" | "rfc6749", code: string, cause: string) =>
    style === "rfc6749"
      ? new ApiError("invalid_grant", "Invalid authorization code.", { status: 400, cause })
      : new ApiError("server_error", `Invalid authorization code: ${printable(code)}`, { status: 500, cause }),
  clientMissing: (answer: ClientAuthAnswer) =>
    new ApiError("invalid_client", "A client id must be provided.", {
      ...clientAuthStatus(answer),
      cause: "no client id",
    }),
  badClient: (answer: ClientAuthAnswer, cause: string) =>
    new ApiError("invalid_client", "Bad client credentials.", { ...clientAuthStatus(answer), cause }),
  authFailed: (cause: string) =>
    new ApiError("authentication_failed", "Authentication failed.", {
      status: 401,
      headers: { "WWW-Authenticate": 'Bearer error="invalid_token"' },
      cause,
    }),
  /** Admin API: an invalid value with a fixed reason phrase (never an echo of the input). */
  invalidBecause: (item: string, reason: string) =>
    new ApiError("invalid_request", `The value of ${item} is not valid: ${reason}.`, { status: 400, cause: reason }),
  /** Admin API: the named record (a client, a subscriber) does not exist. */
  noSuch: (what: string) => new ApiError("not_found", `No such ${what}.`, { status: 404 }),
  notFound: () => new ApiError("not_found", "The requested API address is invalid.", { status: 404 }),
  methodNotAllowed: (allow: readonly string[]) =>
    new ApiError("method_not_allowed", "The HTTP method is not supported.", {
      status: 405,
      headers: { Allow: allow.join(", ") },
    }),
  tooMany: (retryAfterSeconds: number, cause: string) =>
    new ApiError("too_many_requests", "Too many requests. Retry later.", {
      status: 429,
      headers: { "Retry-After": String(Math.max(1, Math.ceil(retryAfterSeconds))) },
      cause,
    }),
  /** RP kit (docs/architecture.md §4.7): a POST from another origin, `Origin: null`, or none where one is required. */
  crossOrigin: (cause: string) =>
    new ApiError("access_denied", "The request must come from this site.", { status: 403, cause }),
  /** RP kit: no valid session cookie or session token. */
  noSession: (cause: string) =>
    new ApiError("authentication_failed", "Authentication failed: no valid session.", {
      status: 401,
      headers: { "WWW-Authenticate": 'Bearer error="invalid_token"' },
      cause,
    }),
  /** RP kit: the login service refused or failed (docs/architecture.md §4.7: 502). */
  upstream: (cause: string) =>
    new ApiError("server_error", "The login service did not answer as expected. Retry later.", { status: 502, cause }),
  server: (cause: string) =>
    new ApiError("server_error", "A temporary error occurred. Retry later.", { status: 500, cause }),
} as const;

/**
 * The invalid-code message echoes the code as the reference does, but only a value that looks like
 * a code (bounded, URL-safe): hostile input is not reflected.
 */
function printable(code: string): string {
  return /^[A-Za-z0-9._~-]{1,128}$/.test(code) ? code : "(malformed)";
}

export const JSON_HEADERS = {
  "Content-Type": "application/json; charset=utf-8",
  "Cache-Control": "no-store",
  Pragma: "no-cache",
  "X-Content-Type-Options": "nosniff",
} as const;

let shared: Headers | undefined;

/**
 * The headers of a JSON answer, with `extra` of its own. Without any, one `Headers` built once: the
 * runtime copies it into each response, a third of what reading an object's properties costs
 * (docs/benchmarks.md).
 */
export function jsonHeaders(extra?: Record<string, string>): HeadersInit {
  return extra ? { ...JSON_HEADERS, ...extra } : (shared ??= new Headers(JSON_HEADERS));
}

/** Writes `{"error","message"}` for any thrown value; unknown throws become a fixed server_error. */
export function errorResponse(err: unknown): Response {
  const e = err instanceof ApiError ? err : E.server(describe(err));
  return new Response(JSON.stringify({ error: e.code, message: e.message }), {
    status: e.status,
    headers: jsonHeaders(Object.keys(e.headers).length > 0 ? e.headers : undefined),
  });
}

/** A short internal description of an unexpected throw, for the log only. */
export function describe(err: unknown): string {
  if (err instanceof ApiError) return `${err.code}: ${err.reason ?? err.message}`;
  if (err instanceof Error) return `${err.name}: ${err.message}`.slice(0, 300);
  return "non-error throw";
}
