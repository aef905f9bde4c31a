// A client deleted while a request is under way: each request reads the client's record once (with
// its secrets, cached or not), so a deletion landing after that read is as if it came just after
// the request, and one landing before it is an unknown client. Neither is a 500 of our own.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "../../support/env";
import { expect, it } from "vitest";
import { createClient } from "../../support/admin";
import { afterRead, basic } from "../../support/helpers";
import tokenWorker from "../../../workers/provider/token/index";

it("the token endpoint reads its client once a request: a deletion right after that read lets the request finish as before it, the next is invalid_client", async () => {
  const c = await createClient({ auto_login: false });
  let reads = 0;
  const counted = afterRead(
    env.DB,
    (sql) => sql.startsWith("SELECT * FROM clients") && ++reads > 0,
    () => env.DB.prepare("DELETE FROM clients WHERE client_id = ?").bind(c.client_id).run(),
  );
  const e = { ...env, DB: counted, CLIENT_CACHE_SECONDS: "0", TOKEN_ERROR_STYLE: "rfc6749" };
  const exchange = async () => {
    const req = new Request("https://login.example/oauth2/token", {
      method: "POST",
      headers: {
        Authorization: basic(c.client_id, c.client_secret),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "grant_type=authorization_code&code=" + "A".repeat(43),
    });
    const ctx = createExecutionContext();
    const res = await tokenWorker.fetch!(req as never, e as never, ctx);
    await waitOnExecutionContext(ctx);
    return { status: res.status, error: ((await res.json()) as { error: string }).error };
  };
  // authenticated by the record it read, then refused for its (unknown) code, as the spec answers
  expect(await exchange()).toEqual({ status: 400, error: "invalid_grant" });
  expect(reads).toBe(1);
  expect(await exchange()).toEqual({ status: 401, error: "invalid_client" });
});
