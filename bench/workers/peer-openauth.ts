// Peer: @openauthjs/openauth's issuer in its documented Cloudflare setup (CloudflareStorage on a
// KV namespace, nodejs_compat), for the benchmark's comparison of token exchanges
// (docs/benchmarks.md "Peers"). A one-route provider ends each authorization at once, so
// `/__bench/mint` mints codes through the issuer's own flow (GET /authorize, then the provider's
// /bench/authorize with the authorization cookie, whose redirect carries the code). OpenAuth has no
// client secrets: its token request names the client. Its KV storage gets one fix (kvStorage
// below) without which it issues no code. Its request logger (Hono's, on every
// request) is silenced here, which only helps the peer. Compiled into the benchmark only.

import { issuer } from "@openauthjs/openauth";
import { CloudflareStorage } from "@openauthjs/openauth/storage/cloudflare";
import { createSubjects } from "@openauthjs/openauth/subject";

type PeerEnv = { OPENAUTH_KV: KVNamespace };

const REDIRECT = "http://localhost/callback"; // a loopback redirect is allowed without an allow-list
const CLIENT = "bench";

console.log = () => {};

/** A Standard Schema validator accepting any `{ id: string }` (what valibot or zod would give). */
const userSchema = {
  "~standard": {
    version: 1 as const,
    vendor: "bench",
    validate: (v: unknown) =>
      typeof v === "object" && v !== null && typeof (v as { id?: unknown }).id === "string"
        ? { value: v as { id: string } }
        : { issues: [{ message: "id required" }] },
  },
};

const subjects = createSubjects({ user: userSchema });

let app: { fetch(req: Request, env: PeerEnv, ctx: ExecutionContext): Promise<Response> } | null = null;

/**
 * CloudflareStorage with expiries of at least 61 s. OpenAuth 0.4.3 stores a code for 60 s and
 * passes KV the whole seconds left, 59 by then, which KV refuses (its minimum is 60): without this,
 * no code is ever issued on KV. One more second of code life changes nothing measured.
 */
function kvStorage(namespace: KVNamespace): ReturnType<typeof CloudflareStorage> {
  const inner = CloudflareStorage({ namespace: namespace as never });
  return {
    ...inner,
    set: (key, value, expiry) =>
      inner.set(key, value, expiry && new Date(Math.max(expiry.getTime(), Date.now() + 61_000))),
  };
}

function appFor(env: PeerEnv) {
  app ??= issuer({
    storage: kvStorage(env.OPENAUTH_KV),
    subjects,
    providers: {
      bench: {
        type: "bench",
        init(route, ctx) {
          route.get("/authorize", (c) => ctx.success(c, { id: crypto.randomUUID() }));
        },
      },
    },
    success: async (ctx, value) => ctx.subject("user", { id: (value as { id: string }).id }),
  }) as never;
  return app!;
}

/** `n` codes, each `{ body }`: the form body of its token request. */
async function mint(env: PeerEnv, ctx: ExecutionContext, origin: string, n: number): Promise<Response> {
  const a = appFor(env);
  const one = async () => {
    const start = await a.fetch(
      new Request(
        `${origin}/authorize?client_id=${CLIENT}&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&state=bench`,
      ),
      env,
      ctx,
    );
    const cookie = (start.headers.get("Set-Cookie") ?? "").split(";")[0]!; // the one authorization cookie ");
    const done = await a.fetch(
      new Request(new URL(start.headers.get("Location") ?? "", origin), { headers: { cookie } }),
      env,
      ctx,
    );
    const code = new URL(done.headers.get("Location") ?? "", origin).searchParams.get("code");
    if (!code) throw new Error(`openauth mint: ${start.status} then ${done.status}`);
    return {
      body: `grant_type=authorization_code&code=${encodeURIComponent(code)}&redirect_uri=${encodeURIComponent(REDIRECT)}&client_id=${CLIENT}`,
    };
  };
  const out = [];
  for (let left = Math.min(n, 5000); left > 0; left -= 100)
    out.push(...(await Promise.all(Array.from({ length: Math.min(100, left) }, one))));
  return Response.json(out);
}

export default {
  async fetch(req, env, ctx) {
    if (req.url.includes("/__bench/mint")) {
      const url = new URL(req.url);
      return mint(env, ctx, url.origin, Number(url.searchParams.get("n") ?? "1") || 1);
    }
    return appFor(env).fetch(req, env, ctx);
  },
} satisfies ExportedHandler<PeerEnv>;
