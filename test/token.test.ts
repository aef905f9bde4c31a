import { describe, expect, it } from "vitest";
import { DEMO, HONG, exchange, mintFor } from "./helpers";

describe("POST /oauth2/token", () => {
  it("exchanges a fresh code for a bearer token (spec §2.3)", async () => {
    const { code } = await mintFor(HONG.phone);
    const res = await exchange(code, DEMO, { state: "xyz" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.token_type).toBe("bearer");
    expect(body.expires_in).toBe(600);
    expect(body.state).toBe("xyz");
    expect(body).not.toHaveProperty("error");
    expect(typeof body.access_token).toBe("string");
  });
});
