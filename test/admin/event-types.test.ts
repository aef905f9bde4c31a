// The event types a client takes (docs/events.md "Registering", docs/operations.md): a client field
// `event_types`, ["plid-deleted"] for every app registered before it existed and by default, checked
// against the known types, changed and shown through the admin API and audited.
import { describe, expect, it } from "vitest";
import { admin, createClient } from "../support/admin";
import { auditEvents } from "../support/audit";

async function invalid(res: Response, field: RegExp): Promise<void> {
  expect(res.status).toBe(400);
  const body = (await res.json()) as { error: string; message: string };
  expect(body.error).toBe("invalid_request");
  expect(body.message).toMatch(field);
}

describe("event_types", () => {
  it('every app takes ["plid-deleted"]: the seeded ones (registered before the field) and a new one by default', async () => {
    for (const id of ["demo-client", "limited-client"]) {
      const c = (await (await admin("GET", `/admin/clients/${id}`)).json()) as { event_types: string[] };
      expect(c.event_types, id).toEqual(["plid-deleted"]);
    }
    const created = await createClient({ events_uri: "https://ev.example/events" });
    expect((created as unknown as { event_types: string[] }).event_types).toEqual(["plid-deleted"]);
    const list = (await (await admin("GET", "/admin/clients")).json()) as { clients: { event_types: string[] }[] };
    for (const c of list.clients) expect(c.event_types).toEqual(["plid-deleted"]);
  });

  it("is set at creation, changed and shown; repeats are dropped; [] takes none", async () => {
    const c = await createClient({ event_types: [] });
    expect((c as unknown as { event_types: string[] }).event_types).toEqual([]);
    const patched = await admin("PATCH", `/admin/clients/${c.client_id}`, {
      json: { event_types: ["plid-deleted", "plid-deleted"] },
    });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as { event_types: string[] }).event_types).toEqual(["plid-deleted"]);
    const read = (await (await admin("GET", `/admin/clients/${c.client_id}`)).json()) as { event_types: string[] };
    expect(read.event_types).toEqual(["plid-deleted"]);
    const [updated] = await auditEvents({ type: "client.updated", clientId: c.client_id });
    expect(JSON.parse(updated!.detail!)).toEqual({ actor: "token:ADMIN_TOKEN", fields: "event_types" });
    const [created] = await auditEvents({ type: "client.created", clientId: c.client_id });
    expect(JSON.parse(created!.detail!)).toMatchObject({ event_types: "" });
  });

  it("refuses what is not a list of known types with 400 invalid_request, changing nothing", async () => {
    const c = await createClient();
    for (const v of [["account-updated"], ["urn:phone-login:event:plid-deleted"], [1], "plid-deleted", null, {}]) {
      await invalid(
        await admin("POST", "/admin/clients", {
          json: { name: "E", redirect_uris: ["https://e.example/cb"], event_types: v },
        }),
        /^The value of event_types(\[0\])? is not valid: /,
      );
      await invalid(
        await admin("PATCH", `/admin/clients/${c.client_id}`, { json: { event_types: v } }),
        /^The value of event_types(\[0\])? is not valid: .*plid-deleted/,
      );
    }
    const read = (await (await admin("GET", `/admin/clients/${c.client_id}`)).json()) as { event_types: string[] };
    expect(read.event_types).toEqual(["plid-deleted"]);
  });
});
