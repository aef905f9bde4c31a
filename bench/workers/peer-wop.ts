// Peer: @cloudflare/workers-oauth-provider in its documented setup (an OAuthProvider wrapping a
// default handler, grants and tokens in the OAUTH_KV namespace), for the benchmark's comparison
// of token exchanges (docs/benchmarks.md "Peers"). Codes are minted through the library's own API
// (createClient, parseAuthRequest, completeAuthorization) by `/__bench/mint`, as the app's consent
// handler would after a sign-in. Refresh tokens are off (refreshTokenTTL 0): the interface issues
// none, and writing one more KV record per exchange would only slow the peer down.
// Compiled into the benchmark only; never deployed.

import { OAuthProvider, type OAuthHelpers } from "@cloudflare/workers-oauth-provider";

type PeerEnv = { OAUTH_KV: KVNamespace; OAUTH_PROVIDER: OAuthHelpers };

const REDIRECT = "https://rp.example/callback";
const ORIGIN = "https://peer.example";

let client: Promise<{ id: string; basic: string }> | null = null;

function benchClient(helpers: OAuthHelpers): Promise<{ id: string; basic: string }> {
  client ??= helpers
    .createClient({
      redirectUris: [REDIRECT],
      clientName: "bench",
      tokenEndpointAuthMethod: "client_secret_basic",
      grantTypes: ["authorization_code"],
      responseTypes: ["code"],
    })
    .then((c) => ({ id: c.clientId, basic: "Basic " + btoa(`${c.clientId}:${c.clientSecret ?? ""}`) }));
  client.catch(() => (client = null));
  return client;
}

/** `n` codes, each `{ auth, body }`: the Authorization header and form body of its token request. */
async function mint(env: PeerEnv, n: number): Promise<Response> {
  const c = await benchClient(env.OAUTH_PROVIDER);
  const authorize = `${ORIGIN}/authorize?response_type=code&client_id=${encodeURIComponent(c.id)}&redirect_uri=${encodeURIComponent(REDIRECT)}&state=bench`;
  const one = async () => {
    const request = await env.OAUTH_PROVIDER.parseAuthRequest(new Request(authorize));
    const { redirectTo } = await env.OAUTH_PROVIDER.completeAuthorization({
      request,
      userId: crypto.randomUUID(),
      metadata: {},
      scope: [],
      props: { plid: crypto.randomUUID() },
    });
    const code = new URL(redirectTo).searchParams.get("code") ?? "";
    return {
      auth: c.basic,
      body: `grant_type=authorization_code&code=${encodeURIComponent(code)}&redirect_uri=${encodeURIComponent(REDIRECT)}`,
    };
  };
  return Response.json(await Promise.all(Array.from({ length: Math.min(n, 5000) }, one)));
}

export default new OAuthProvider<PeerEnv>({
  apiRoute: "/api/",
  apiHandler: { fetch: async (_req, _env, ctx) => Response.json((ctx as unknown as { props: unknown }).props) },
  defaultHandler: {
    async fetch(req, env) {
      const url = new URL(req.url);
      if (url.pathname === "/__bench/mint") return mint(env, Number(url.searchParams.get("n") ?? "1") || 1);
      return new Response("not found", { status: 404 });
    },
  },
  authorizeEndpoint: "/authorize",
  tokenEndpoint: "/token",
  resourceMetadata: { resource: `${ORIGIN}/api`, authorization_servers: [ORIGIN] },
  accessTokenTTL: 600,
  refreshTokenTTL: 0,
});
