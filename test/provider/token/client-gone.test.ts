// A client deleted between the two reads a request makes of it (its record, then its secrets, each
// from D1 once the cache has expired) is refused with the endpoint's own error, never a 500.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "../../support/env";
import { expect, it } from "vitest";
import { createClient } from "../../support/admin";
import { afterRead, basic } from "../../support/helpers";
import tokenWorker from "../../../workers/provider/token/index";

/** The real D1, deleting `clientId` right after the first read of its record has answered. */
function deletingAfterFirstRead(db: D1Database, clientId: string): D1Database {
  return afterRead(
    db,
    (sql) => sql.startsWith("SELECT * FROM clients"),
    () => db.prepare("DELETE FROM clients WHERE client_id = ?").bind(clientId).run(),
  );
}

it("the token endpoint: a client deleted between its record and its secrets is invalid_client, not a 500", async () => {
  const c = await createClient({ auto_login: false });
  const e = { ...env, DB: deletingAfterFirstRead(env.DB, c.client_id), CLIENT_CACHE_SECONDS: "0" };
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
  expect(res.status).toBe(401);
  expect(((await res.json()) as { error: string }).error).toBe("invalid_client");
});
