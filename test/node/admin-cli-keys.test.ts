// The admin CLI's signing keys (scripts/admin.mjs, docs/oidc.md "Signing keys"): `keys rotate` posts
// the rotation and shows the new key, `keys list` shows each key's life. The requests are captured in
// process; the service's side is test/provider/oidc/keys.test.ts.
import { describe, expect, it } from "vitest";
import { run } from "./admin-cli-stand-in";

const KEY = {
  kid: "k2",
  state: "next",
  created_at: "2026-11-26T12:00:00.000Z",
  created_by: "token:ops",
  signs_from: "2026-11-26T12:07:00.000Z",
  signs_until: null,
  published_until: null,
};

describe("keys", () => {
  it("rotate posts /admin/keys/rotate and shows the new key and when it signs", async () => {
    const r = await run(["keys", "rotate"], KEY);
    expect(r.code, r.err).toBe(0);
    expect(r.calls).toEqual([{ method: "POST", path: "/admin/keys/rotate", body: {} }]);
    expect(r.out).toMatch(/^kid\s+k2$/m);
    expect(r.out).toMatch(/^signs_from\s+2026-11-26T12:07:00.000Z$/m);
  });

  it("list shows every key's state and life, never a private key", async () => {
    const r = await run(["keys", "list"], {
      keys: [KEY, { ...KEY, kid: "k1", state: "signing", created_by: "service", signs_until: KEY.signs_from }],
    });
    expect(r.code, r.err).toBe(0);
    expect(r.calls).toEqual([{ method: "GET", path: "/admin/keys", body: undefined }]);
    expect(r.out).toMatch(/k2\s+next\s+token:ops/);
    expect(r.out).toMatch(/k1\s+signing\s+service/);
    const help = await run(["keys", "rotate", "--help"], KEY);
    expect(help.out).toContain("7 minutes");
  });
});
