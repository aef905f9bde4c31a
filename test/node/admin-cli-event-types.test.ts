// The admin CLI's --event-types (scripts/admin.mjs, docs/operations.md): clients create and update
// send the client's `event_types` as a list ("" for none), and clients get shows them. The requests
// are captured in process; the service's side is test/admin/event-types.test.ts.
import { describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../../workers/core/event-types.js";
import { run } from "./admin-cli-stand-in";

const CLIENT = { client_id: "c1", name: "Shop", event_types: ["plid-deleted"] };

describe("clients --event-types", () => {
  it("create sends the listed types; without the option the service's default applies (nothing sent)", async () => {
    const r = await run(
      [
        "clients",
        "create",
        "--name",
        "Shop",
        "--redirect-uri",
        "https://shop.example/cb",
        "--event-types",
        "plid-deleted",
      ],
      CLIENT,
    );
    expect(r.code, r.err).toBe(0);
    expect(r.calls[0]).toMatchObject({ method: "POST", path: "/admin/clients" });
    expect((r.calls[0]!.body as Record<string, unknown>).event_types).toEqual(["plid-deleted"]);
    const plain = await run(
      ["clients", "create", "--name", "Shop", "--redirect-uri", "https://shop.example/cb"],
      CLIENT,
    );
    expect(plain.calls[0]!.body).not.toHaveProperty("event_types");
  });

  it('update sends the new list, "" for none; it alone is a change', async () => {
    const none = await run(["clients", "update", "c1", "--event-types", ""], { ...CLIENT, event_types: [] });
    expect(none.code, none.err).toBe(0);
    expect(none.calls[0]).toEqual({ method: "PATCH", path: "/admin/clients/c1", body: { event_types: [] } });
    const one = await run(["clients", "update", "c1", "--event-types", "plid-deleted"], CLIENT);
    expect(one.calls[0]!.body).toEqual({ event_types: ["plid-deleted"] });
    const help = await run(["clients", "update", "--help"], CLIENT);
    expect(help.out).toContain("--event-types");
  });

  it("clients get shows the client's event types", async () => {
    const r = await run(["clients", "get", "c1"], CLIENT);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^event_types\s+plid-deleted$/m);
  });

  it("the help of create and update lists exactly the types the service accepts, credential-change and test included", async () => {
    // the list the service checks event_types against (workers/admin/validate.ts) is the CLI's too
    expect([...EVENT_TYPES]).toEqual(["plid-deleted", "credential-change", "test"]);
    for (const command of ["create", "update"]) {
      const help = await run(["clients", command, "--help"], CLIENT);
      expect(help.code, help.err).toBe(0);
      const line = help.out.split("\n").find((l) => l.trimStart().startsWith("--event-types"));
      const listed = /comma-separated(?: \("" for none\))?: ([a-z,-]+)/.exec(line ?? "")?.[1];
      expect(listed?.split(","), `${command}: ${line}`).toEqual([...EVENT_TYPES]);
    }
  });
});
