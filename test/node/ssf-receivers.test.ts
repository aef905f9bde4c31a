// Shared Signals receivers written from the specs alone (OpenID SSF 1.0, RFC 8936, RFC 8417,
// RFC 9493), in two languages, against the running service (docs/events.md "Shared Signals"):
// Node with `jose` (here) and Python with Debian's python3-authlib (./ssf/receiver.py). Each reads
// the configuration document, creates its own app's poll stream with the app's credentials, gets a
// verification event, and then the SETs of a real change (an operator removing a subscriber who
// signed in to both apps), each verified against the published JWKS; neither can reach the other's
// stream.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { devAdminToken, startServer, type Server } from "./server";
import { signIn } from "./signin-driver";

const CAEP = "https://schemas.openid.net/secevent/caep/event-type/";
const RISC = "https://schemas.openid.net/secevent/risc/event-type/";
const VERIFICATION = "https://schemas.openid.net/secevent/ssf/event-type/verification";
const POLL = "urn:ietf:rfc:8936";
const DEMO = {
  id: "demo-client",
  secret: "demoSecret0123456789abcdefABCDEF",
  redirect: "https://demo.example/callback",
};
const OIDC = {
  id: "oidc-client",
  secret: "oidcSecret0123456789abcdefABCDEF",
  redirect: "https://oidc.example/callback",
};
const KIM = { telco: "K", name: "김영희", phone: "01023456789", code: "234567" };

let server: Server;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

const basic = (c: { id: string; secret: string }) => `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString("base64")}`;

interface Conf {
  issuer: string;
  jwks_uri: string;
  configuration_endpoint: string;
  verification_endpoint: string;
  status_endpoint: string;
  delivery_methods_supported: string[];
}

interface Received {
  type: string;
  event: Record<string, unknown>;
  sub_id: { format: string; id?: string; iss?: string; sub?: string };
  txn?: string;
  jti: string;
}

/** The Node receiver: what an app writes from SSF 1.0 with `jose`. */
class NodeReceiver {
  private keys!: ReturnType<typeof createRemoteJWKSet>;
  conf!: Conf;
  endpoint!: string;
  streamId!: string;
  constructor(private readonly app: { id: string; secret: string }) {}

  private async call(method: string, url: string, body?: unknown): Promise<{ status: number; json: any }> {
    const res = await fetch(url, {
      method,
      headers: {
        Authorization: basic(this.app),
        ...(body !== undefined ? { "Content-Type": "application/json" } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  }

  async setup(base: string): Promise<Received> {
    this.conf = (await (await fetch(`${base}/.well-known/ssf-configuration`)).json()) as Conf;
    expect(this.conf.delivery_methods_supported).toContain(POLL);
    this.keys = createRemoteJWKSet(new URL(this.conf.jwks_uri));
    const made = await this.call("POST", this.conf.configuration_endpoint, {
      delivery: { method: POLL },
      events_requested: [`${CAEP}session-revoked`, `${RISC}account-purged`, `${CAEP}credential-change`],
      description: "Node receiver",
    });
    expect(made.status).toBe(201);
    this.streamId = made.json.stream_id;
    this.endpoint = made.json.delivery.endpoint_url;
    expect(
      (await this.call("POST", this.conf.verification_endpoint, { stream_id: this.streamId, state: "node-1" })).status,
    ).toBe(204);
    const [v] = await this.poll(1);
    return v!;
  }

  async verify(token: string): Promise<Received> {
    const { payload, protectedHeader } = await jwtVerify(token, this.keys, {
      algorithms: ["ES256"],
      typ: "secevent+jwt",
      issuer: this.conf.issuer,
      audience: this.app.id,
      requiredClaims: ["iat", "jti"],
    });
    expect(protectedHeader.kid).toBeTruthy();
    const events = Object.entries(payload.events as Record<string, Record<string, unknown>>);
    expect(events).toHaveLength(1);
    const [[type, event]] = events as [[string, Record<string, unknown>]];
    return { type, event, sub_id: payload.sub_id as Received["sub_id"], txn: payload.txn as string, jti: payload.jti! };
  }

  async poll(count: number): Promise<Received[]> {
    const got: Received[] = [];
    let ack: string[] = [];
    const end = Date.now() + 60_000;
    while (got.length < count) {
      expect(Date.now(), `${got.length} of ${count} SETs`).toBeLessThan(end);
      const r = await this.call("POST", this.endpoint, { maxEvents: 10, returnImmediately: false, ack });
      expect(r.status).toBe(200);
      ack = [];
      for (const [jti, token] of Object.entries(r.json.sets as Record<string, string>)) {
        const s = await this.verify(token);
        expect(s.jti).toBe(jti);
        got.push(s);
        ack.push(jti);
      }
    }
    if (ack.length) await this.call("POST", this.endpoint, { maxEvents: 0, returnImmediately: true, ack });
    return got;
  }
}

/** The Python receiver (./ssf/receiver.py) under Debian's python3: its one JSON answer. */
function python(args: string[]): Promise<any> {
  return new Promise((resolve, reject) => {
    const child = spawn("/usr/bin/python3", [join(import.meta.dirname, "ssf", "receiver.py"), ...args]);
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d));
    child.stderr.on("data", (d: Buffer) => (err += d));
    child.once("error", reject);
    child.once("close", (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`receiver.py exited ${code}:\n${err}`)),
    );
  });
}

const authorizeUrl = (app: { id: string; redirect: string }, extra: Record<string, string> = {}) =>
  `${server.base}/oauth2/authorize?${new URLSearchParams({ response_type: "code", client_id: app.id, redirect_uri: app.redirect, state: "s", ...extra })}`;

describe("Shared Signals receivers in Node and Python", () => {
  it("each creates its stream, is verified, and verifies the SETs of a subscriber removed after signing in to both apps", async () => {
    const node = new NodeReceiver(DEMO);
    const [verification, py] = await Promise.all([
      node.setup(server.base),
      python(["setup", server.base, OIDC.id, OIDC.secret]),
    ]);
    expect(verification).toMatchObject({
      type: VERIFICATION,
      event: { state: "node-1" },
      sub_id: { format: "opaque", id: node.streamId },
    });
    expect(py.verification).toMatchObject({ type: VERIFICATION, event: { state: "py-1" } });
    expect(py.events_delivered).toEqual([
      `${CAEP}session-revoked`,
      `${RISC}account-purged`,
      `${CAEP}credential-change`,
    ]);

    // neither app reaches the other's stream: every stream route answers 404
    const other = async (auth: string, streamId: string) => {
      const routes: [string, string, unknown?][] = [
        ["GET", `/ssf/stream?stream_id=${streamId}`],
        ["PATCH", "/ssf/stream", { stream_id: streamId, description: "x" }],
        ["GET", `/ssf/status?stream_id=${streamId}`],
        ["POST", "/ssf/status", { stream_id: streamId, status: "paused" }],
        ["POST", "/ssf/verify", { stream_id: streamId }],
        ["POST", `/ssf/poll/${streamId}`, { returnImmediately: true }],
        ["DELETE", `/ssf/stream?stream_id=${streamId}`],
      ];
      for (const [method, path, body] of routes) {
        const res = await fetch(`${server.base}${path}`, {
          method,
          headers: { Authorization: auth, "Content-Type": "application/json" },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
        expect([method, path, res.status]).toEqual([method, path, 404]);
      }
    };
    await other(basic(OIDC), node.streamId);
    await other(basic(DEMO), py.stream_id);

    // the person signs in to both apps, then the operator removes the subscriber
    for (const [app, extra] of [
      [DEMO, {}],
      [OIDC, { scope: "openid", nonce: "n" }],
    ] as const) {
      const done = await signIn(authorizeUrl(app, extra), KIM);
      expect(done.code, `${app.id}: ${done.steps.join(" → ")}`).toBeTruthy();
    }
    const removed = await fetch(`${server.base}/admin/directory/01023456789`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${devAdminToken()}` },
    });
    expect(removed.status).toBe(200);

    const [nodeSets, pySets] = await Promise.all([
      node.poll(2),
      python(["poll", server.base, OIDC.id, OIDC.secret, py.stream_id, "2"]) as Promise<Received[]>,
    ]);
    for (const [sets, format] of [
      [nodeSets, "opaque"],
      [pySets, "iss_sub"],
    ] as const) {
      expect(sets.map((s) => s.type).sort()).toEqual([`${CAEP}session-revoked`, `${RISC}account-purged`]);
      // one change: one txn, one subject
      expect(new Set(sets.map((s) => s.txn)).size).toBe(1);
      expect(sets[0]!.txn).toBeTruthy();
      expect(sets[0]!.sub_id).toEqual(sets[1]!.sub_id);
      expect(sets[0]!.sub_id.format).toBe(format);
      const revoked = sets.find((s) => s.type === `${CAEP}session-revoked`)!;
      expect(revoked.event).toMatchObject({ initiating_entity: "admin" });
      // never a number, a name or a ci
      const text = JSON.stringify(sets);
      for (const secret of ["01023456789", "2345-6789", "김영희"]) expect(text).not.toContain(secret);
    }
    expect(pySets[0]!.sub_id.iss).toBe(node.conf.issuer);
  });
});
