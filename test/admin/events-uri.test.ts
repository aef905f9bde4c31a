// An app's events_uri is refused at registration when it names a host that is not public
// (docs/events.md "Registering", docs/security.md): the service would POST there from inside its own
// network. A client registered before the rule keeps its address until it is changed, and the admin
// API names it (`events_uri_problem`, docs/operations.md).
import { env } from "../support/env";
import { describe, expect, it } from "vitest";
import adminWorker from "../../workers/admin/index";
import { admin, ADMIN_TOKEN, createClient } from "../support/admin";

const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;

async function refused(res: Response, hostname: string): Promise<string> {
  expect(res.status).toBe(400);
  const body = (await res.json()) as { error: string; message: string };
  expect(body.error).toBe("invalid_request");
  expect(body.message).toMatch(/^The value of events_uri is not valid: must /);
  // the answer names the rule, never the address
  expect(body.message).not.toContain(hostname.replace(/^\[|\]$/g, ""));
  return body.message;
}

/** The admin worker with DEV_MODE off, as deployed. */
async function deployed(method: string, path: string, json: unknown): Promise<Response> {
  return adminWorker.fetch!(
    new Request(`https://login.example.com${path}`, {
      method,
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify(json),
    }) as never,
    { ...env, DEV_MODE: "false" },
    ctx,
  );
}

const PRIVATE = [
  ["https://169.254.169.254/latest/meta-data/", /link-local/],
  ["https://10.0.0.1/e", /private-network/],
  ["https://metadata.google.internal/computeMetadata/v1/", /local-network name/],
  // the metadata address in decimal, octal and hex
  ["https://2852039166/", /link-local/],
  ["https://0251.0376.0251.0376/", /link-local/],
  ["https://0xa9fea9fe/", /link-local/],
  ["https://172.16.5.4/e", /private-network/],
  ["https://192.168.1.1/e", /private-network/],
  ["https://100.64.0.1/e", /carrier-grade NAT/],
  ["https://0.1.2.3/e", /unspecified/],
  ["https://[fd12:3456::1]/e", /unique-local/],
  ["https://[fe80::1]/e", /link-local/],
  ["https://[::ffff:169.254.169.254]/e", /IPv4-mapped/],
  ["https://[::ffff:10.0.0.1]/e", /IPv4-mapped/],
  ["https://printer.local/e", /local-network name/],
  ["https://metadata/computeMetadata/v1/", /local-network name/],
] as const;

describe("events_uri: refused at registration when its host is not public", () => {
  it.each(PRIVATE)("POST and PATCH refuse %s with 400 invalid_request naming the rule", async (uri, rule) => {
    const hostname = new URL(uri).hostname;
    const created = await admin("POST", "/admin/clients", {
      json: { name: "E", redirect_uris: ["https://e.example/cb"], events_uri: uri },
    });
    expect(await refused(created, hostname)).toMatch(rule);
    const c = await createClient();
    const patched = await admin("PATCH", `/admin/clients/${c.client_id}`, { json: { events_uri: uri } });
    expect(await refused(patched, hostname)).toMatch(rule);
    const read = (await (await admin("GET", `/admin/clients/${c.client_id}`)).json()) as { events_uri: null };
    expect(read.events_uri).toBeNull();
    // with DEV_MODE too: only loopback is opened there
    expect(
      (
        await deployed("POST", "/admin/clients", {
          name: "E",
          redirect_uris: ["https://e.example/cb"],
          events_uri: uri,
        })
      ).status,
    ).toBe(400);
  });

  it("loopback is refused where DEV_MODE is off; with DEV_MODE, http on localhost, 127.0.0.1, [::1] stays allowed (the demo's receiver)", async () => {
    for (const uri of [
      "http://localhost:8787/auth/events",
      "http://127.0.0.1:9000/events",
      "http://[::1]:9000/events",
      "https://127.0.0.1/events",
      "https://localhost/events",
      "https://app.localhost/events",
    ]) {
      const res = await deployed("POST", "/admin/clients", {
        name: "E",
        redirect_uris: ["https://e.example/cb"],
        events_uri: uri,
      });
      expect(await refused(res, new URL(uri).hostname), uri).toMatch(/loopback|https/);
    }
    for (const uri of [
      "http://localhost:8787/auth/events",
      "http://127.0.0.1:9000/events",
      "http://[::1]:9000/events",
    ]) {
      const res = await admin("POST", "/admin/clients", {
        json: { name: "E", redirect_uris: ["https://e.example/cb"], events_uri: uri },
      });
      expect(res.status, uri).toBe(201);
      expect(((await res.json()) as { events_uri: string }).events_uri).toBe(uri);
    }
  });

  it("public hosts are accepted, as names, IPv4 and IPv6 literals", async () => {
    for (const uri of [
      "https://ev.example/events",
      "https://8.8.8.8/events",
      "https://[2001:4860:4860::8888]/events",
    ]) {
      const res = await deployed("POST", "/admin/clients", {
        name: "E",
        redirect_uris: ["https://e.example/cb"],
        events_uri: uri,
      });
      expect(res.status, uri).toBe(201);
      expect(await res.json()).toMatchObject({ events_uri: uri, events_uri_problem: null });
    }
  });
});

describe("a client registered before the rule", () => {
  it("keeps its address until it is changed, and the admin API names it in the list and the client", async () => {
    const held = await createClient({ events_uri: "https://ev.example/events" });
    const clean = await createClient({ events_uri: "https://ev.example/events" });
    await env.DB.prepare("UPDATE clients SET events_uri = ? WHERE client_id = ?")
      .bind("https://169.254.169.254/latest/meta-data/", held.client_id)
      .run();

    const list = (await (await admin("GET", "/admin/clients")).json()) as {
      clients: { client_id: string; events_uri: string | null; events_uri_problem: string | null }[];
    };
    const flagged = list.clients.filter((c) => c.events_uri_problem !== null).map((c) => c.client_id);
    expect(flagged).toContain(held.client_id);
    expect(flagged).not.toContain(clean.client_id);
    expect(flagged).not.toContain("demo-client"); // the dev worker's loopback receiver, in DEV_MODE
    const one = list.clients.find((c) => c.client_id === held.client_id)!;
    expect(one.events_uri).toBe("https://169.254.169.254/latest/meta-data/");
    expect(one.events_uri_problem).toMatch(/^must name a public host, not a link-local address/);

    // another change leaves it; setting it again is refused; a public address clears the problem
    const renamed = await admin("PATCH", `/admin/clients/${held.client_id}`, { json: { name: "Renamed" } });
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toMatchObject({
      name: "Renamed",
      events_uri: "https://169.254.169.254/latest/meta-data/",
      events_uri_problem: expect.stringMatching(/link-local/),
    });
    await refused(
      await admin("PATCH", `/admin/clients/${held.client_id}`, {
        json: { events_uri: "https://169.254.169.254/latest/meta-data/" },
      }),
      "169.254.169.254",
    );
    const fixed = await admin("PATCH", `/admin/clients/${held.client_id}`, {
      json: { events_uri: "https://ev.example/events" },
    });
    expect(await fixed.json()).toMatchObject({ events_uri: "https://ev.example/events", events_uri_problem: null });
  });

  it("the dev worker's loopback receiver is named where DEV_MODE is off", async () => {
    const res = await adminWorker.fetch!(
      new Request("https://login.example.com/admin/clients/demo-client", {
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      }) as never,
      { ...env, DEV_MODE: "false" },
      ctx,
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      events_uri: "http://localhost:8787/auth/events",
      events_uri_problem: expect.stringMatching(/https/),
    });
  });
});
