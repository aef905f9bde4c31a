// Shared Signals receivers written from the specs alone (OpenID SSF 1.0, RFC 8936, RFC 8417,
// RFC 9493), in two languages, against the running service (docs/events.md "Shared Signals"):
// Node with `jose` (here) and Python with Debian's python3-authlib (./ssf/receiver.py). Each reads
// the configuration document, creates its own app's poll stream with the app's credentials, gets a
// verification event, and then the SETs of a real change (an operator removing a subscriber who
// signed in to both apps), each verified against the published JWKS; neither can reach the other's
// stream. Then the Node receiver takes pushes on a loopback HTTP server (the service allows a
// loopback endpoint in DEV_MODE, as `npm start` runs), with an access token of its app for the
// stream API: a paused stream delivers nothing and then resumes, and a signing-key rotation during
// delivery fails no verification. The server runs with JWKS_MAX_AGE_SECONDS=2, so a rotated key
// signs 64 s after it is published (docs/oidc.md "Signing keys"), within the run.
import { spawn } from "node:child_process";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { devAdminToken, startServer, type Server } from "./server";
import { agreeIfAsked, heading, launchChromium, virtualAuthenticator } from "./chromium";
import { outboxCode, signIn } from "./signin-driver";

const CAEP = "https://schemas.openid.net/secevent/caep/event-type/";
const RISC = "https://schemas.openid.net/secevent/risc/event-type/";
const VERIFICATION = "https://schemas.openid.net/secevent/ssf/event-type/verification";
const POLL = "urn:ietf:rfc:8936";
const PUSH = "urn:ietf:rfc:8935";
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
const HONG = { telco: "S", name: "홍길동", phone: "01012345678", code: "123456" };
const SMITH = { telco: "L", name: "John Smith", phone: "01034567890", code: "345678" };
/** A person the test imports, with no fixed code (a test number's SIM is never reported changed). */
const CHOI = { telco: "S", name: "최지우", phone: "01055501234", code: "" };
const CHOI_CI = Buffer.alloc(64, 201).toString("base64");

let server: Server;
beforeAll(async () => {
  server = await startServer({ vars: { JWKS_MAX_AGE_SECONDS: "2" } });
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
  authorization_schemes: { spec_urn: string }[];
}

interface Received {
  type: string;
  event: Record<string, unknown>;
  sub_id: { format: string; id?: string; iss?: string; sub?: string };
  txn?: string;
  jti: string;
  kid?: string;
}

/** The Node receiver: what an app writes from SSF 1.0 with `jose`. */
class NodeReceiver {
  private keys!: ReturnType<typeof createRemoteJWKSet>;
  conf!: Conf;
  endpoint!: string;
  streamId!: string;
  /** How it authenticates to the stream API: its Basic credentials, or its access token. */
  auth: string;
  constructor(private readonly app: { id: string; secret: string }) {
    this.auth = basic(app);
  }

  async call(method: string, url: string, body?: unknown): Promise<{ status: number; json: any }> {
    const res = await fetch(url, {
      method,
      headers: {
        Authorization: this.auth,
        ...(body !== undefined ? { "Content-Type": "application/json" } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  }

  /**
   * Reads the configuration document and, as its authorization_schemes offer OAuth 2.0, takes an
   * access token of its app from the token endpoint (client_credentials, scope ssf) for the stream API.
   */
  async useToken(base: string): Promise<void> {
    this.conf = (await (await fetch(`${base}/.well-known/ssf-configuration`)).json()) as Conf;
    expect(this.conf.authorization_schemes).toContainEqual({ spec_urn: "urn:ietf:rfc:6749" });
    this.keys = createRemoteJWKSet(new URL(this.conf.jwks_uri));
    const oidc = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as { token_endpoint: string };
    const res = await fetch(oidc.token_endpoint, {
      method: "POST",
      headers: { Authorization: basic(this.app), "Content-Type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials&scope=ssf",
    });
    expect(res.status).toBe(200);
    const t = (await res.json()) as { access_token: string; token_type: string; scope: string };
    expect([t.token_type.toLowerCase(), t.scope]).toEqual(["bearer", "ssf"]);
    this.auth = `Bearer ${t.access_token}`;
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
    return {
      type,
      event,
      sub_id: payload.sub_id as Received["sub_id"],
      txn: payload.txn as string,
      jti: payload.jti!,
      kid: protectedHeader.kid!,
    };
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

/**
 * The Python receiver (./ssf/receiver.py) under Debian's python3: its JSON answer; `onReady` is
 * called when the push verb prints `{"ready": true}`, its stream pushing to it.
 */
function python(args: string[], onReady?: () => void): Promise<any> {
  return new Promise((resolve, reject) => {
    const child = spawn("/usr/bin/python3", [join(import.meta.dirname, "ssf", "receiver.py"), ...args]);
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d;
      const ready = '{"ready": true}\n';
      if (out.startsWith(ready)) {
        out = out.slice(ready.length);
        onReady?.();
      }
    });
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
  it("each creates its stream, is verified, and verifies the SETs of a subscriber removed after signing in to both apps; the Python one then by push, of a number passed to another person", async () => {
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
        ["PUT", "/ssf/stream", { stream_id: streamId, delivery: { method: POLL } }],
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
    // with either credential the configuration document offers: Basic, or an access token of the app
    const tokenOf = async (app: { id: string; secret: string }) => {
      const res = await fetch(`${server.base}/oauth2/token`, {
        method: "POST",
        headers: { Authorization: basic(app), "Content-Type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials&scope=ssf",
      });
      expect(res.status).toBe(200);
      return `Bearer ${((await res.json()) as { access_token: string }).access_token}`;
    };
    await other(basic(OIDC), node.streamId);
    await other(await tokenOf(OIDC), node.streamId);
    await other(basic(DEMO), py.stream_id);
    await other(await tokenOf(DEMO), py.stream_id);

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

    // the Python receiver by push (RFC 8935): its stream switched to a loopback server of its own;
    // a person signs in to its app, and the carrier then gives the number to another person
    const YOON = { telco: "K", name: "윤서연", phone: "01055505678", code: "" };
    await importPerson(YOON, 211);
    const yoonIn = await signIn(authorizeUrl(OIDC, { scope: "openid", nonce: "n" }), YOON);
    expect(yoonIn.code, yoonIn.steps.join(" → ")).toBeTruthy();
    let ready!: () => void;
    const isReady = new Promise<void>((r) => (ready = r));
    const pushed = python(["push", server.base, OIDC.id, OIDC.secret, py.stream_id, "3"], ready) as Promise<Received[]>;
    await Promise.race([isReady, pushed]);
    await importPerson({ ...YOON, name: "강하늘" }, 212);
    const pySetsPushed = await pushed;
    expect(pySetsPushed.map((s) => s.type).sort()).toEqual(
      [`${CAEP}session-revoked`, `${RISC}account-purged`, `${RISC}identifier-recycled`].sort(),
    );
    expect(pySetsPushed.every((s) => s.sub_id.format === "iss_sub" && s.sub_id.iss === node.conf.issuer)).toBe(true);
    expect(new Set(pySetsPushed.map((s) => s.txn)).size).toBe(1);
    for (const secret of [YOON.phone, YOON.name, "강하늘", "5550-5678"])
      expect(JSON.stringify(pySetsPushed)).not.toContain(secret);
  });
});

/** The Node receiver's push endpoint (RFC 8935) on loopback: each SET verified as it arrives. */
class PushEndpoint {
  readonly received: Received[] = [];
  readonly failures: string[] = [];
  private http!: HttpServer;
  url = "";
  constructor(
    private readonly rx: NodeReceiver,
    private readonly authorization: string,
  ) {}

  async start(): Promise<void> {
    this.http = createServer((req, res) => {
      let body = "";
      req.on("data", (d: Buffer) => (body += d));
      req.on("end", () => {
        void (async () => {
          try {
            if (req.headers.authorization !== this.authorization) throw new Error("not the stream's Authorization");
            if (req.headers["content-type"] !== "application/secevent+jwt") throw new Error("not a secevent+jwt");
            this.received.push(await this.rx.verify(body));
            res.writeHead(202).end();
          } catch (e) {
            this.failures.push(
              `${e instanceof Error ? e.message : String(e)} (kid ${decodeProtectedHeader(body).kid})`,
            );
            res.writeHead(400, { "Content-Type": "application/json" });
            res.end(JSON.stringify({ err: "invalid_key", description: "does not verify" }));
          }
        })();
      });
    });
    await new Promise<void>((r) => this.http.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.http.address() as AddressInfo).port}/ssf`;
  }

  stop(): Promise<void> {
    return new Promise((r) => this.http.close(() => r()));
  }

  async waitFor(count: number, ms = 20_000): Promise<void> {
    const end = Date.now() + ms;
    while (this.received.length + this.failures.length < count) {
      expect(Date.now(), `${this.received.length} of ${count} SETs; failed: ${this.failures.join("; ")}`).toBeLessThan(
        end,
      );
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * The carrier's directory import of one person (`fill` makes their `ci`, 64 bytes of it), with any
 * risk signal given; its answer.
 */
async function importPerson(
  who: { telco: string; name: string; phone: string },
  fill: number,
  signal: Record<string, string> = {},
): Promise<{ signals_changed?: number }> {
  const res = await fetch(`${server.base}/admin/directory/import`, {
    method: "POST",
    headers: { Authorization: `Bearer ${devAdminToken()}`, "Content-Type": "application/json" },
    body: JSON.stringify([
      {
        telcoCd: who.telco,
        phoneNo: who.phone,
        name: who.name,
        gender: "F",
        birth: "1990-01-01",
        foreign: "L",
        ci: Buffer.alloc(64, fill).toString("base64"),
        ...signal,
      },
    ]),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { signals_changed?: number };
}

const adminCall = (method: string, path: string) =>
  fetch(`${server.base}${path}`, { method, headers: { Authorization: `Bearer ${devAdminToken()}` } });

describe("the Node receiver by push (RFC 8935) on loopback", () => {
  it("with its app's access token: the verification event, a paused stream delivers nothing and then resumes, a SIM change the carrier reports and a passkey made in Chromium are credential-changes, and a signing-key rotation during delivery fails no verification", async () => {
    const rx = new NodeReceiver(DEMO);
    await rx.useToken(server.base);
    const push = new PushEndpoint(rx, "Bearer push-secret-1");
    await push.start();
    try {
      // the app's stream becomes a push stream to the loopback endpoint
      for (const s of (await rx.call("GET", rx.conf.configuration_endpoint)).json as { stream_id: string }[])
        expect((await rx.call("DELETE", `${rx.conf.configuration_endpoint}?stream_id=${s.stream_id}`)).status).toBe(
          204,
        );
      const made = await rx.call("POST", rx.conf.configuration_endpoint, {
        delivery: { method: PUSH, endpoint_url: push.url, authorization_header: "Bearer push-secret-1" },
        events_requested: [`${CAEP}session-revoked`, `${RISC}account-purged`, `${CAEP}credential-change`],
      });
      expect(made.status).toBe(201);
      const streamId = made.json.stream_id as string;
      // the carrier's directory: one more person, who signs in to the app
      await importPerson(CHOI, 201);
      const choi = await signIn(authorizeUrl(DEMO), CHOI);
      expect(choi.code, choi.steps.join(" → ")).toBeTruthy();
      const verify = async (state: string) =>
        expect((await rx.call("POST", rx.conf.verification_endpoint, { stream_id: streamId, state })).status).toBe(204);
      await verify("push-1");
      await push.waitFor(1);
      expect(push.received[0]).toMatchObject({ type: VERIFICATION, event: { state: "push-1" } });
      const oldKid = push.received[0]!.kid;

      // paused: a real change is held
      const paused = await rx.call("POST", rx.conf.status_endpoint, { stream_id: streamId, status: "paused" });
      expect(paused.json).toEqual({ stream_id: streamId, status: "paused" });
      // the operator rotates the signing key while the change waits
      const rotated = await adminCall("POST", "/admin/keys/rotate");
      expect(rotated.status).toBe(201);
      const key = (await rotated.json()) as { kid: string; signs_from: string };
      for (const who of [HONG, SMITH]) {
        const done = await signIn(authorizeUrl(DEMO), who);
        expect(done.code, done.steps.join(" → ")).toBeTruthy();
      }
      expect((await adminCall("DELETE", `/admin/directory/${HONG.phone}`)).status).toBe(200);
      const held = async () =>
        (
          (await (await adminCall("GET", "/admin/events")).json()) as {
            events: { client_id: string; last_outcome: string }[];
          }
        ).events.filter((e) => e.client_id === DEMO.id);
      const end = Date.now() + 15_000;
      while (!(await held()).some((e) => e.last_outcome === "paused")) {
        expect(Date.now()).toBeLessThan(end);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(push.received).toHaveLength(1);

      // enabled: what waited is pushed at once, signed by the key that signs now
      expect((await rx.call("POST", rx.conf.status_endpoint, { stream_id: streamId, status: "enabled" })).status).toBe(
        200,
      );
      await push.waitFor(3);
      const first = push.received.slice(1, 3);
      expect(first.map((r) => r.type).sort()).toEqual([`${CAEP}session-revoked`, `${RISC}account-purged`]);

      // the carrier reports that CHOI changed their SIM an hour ago: the app hears a credential-change
      // (pushed once the directory's job runs, within the wait for the new key below)
      const simChangedAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 3_600_000);
      expect(
        (await importPerson(CHOI, 201, { simChangedAt: simChangedAt.toISOString(), simChangeKind: "person" }))
          .signals_changed,
      ).toBe(1);

      // a person of the app makes a passkey after a code sign-in, in Chromium with a virtual
      // authenticator: the app hears a credential-change of a platform passkey made
      const HAN = { telco: "S", name: "한지민", phone: "01055509012" };
      await importPerson(HAN, 221);
      const chromium = await launchChromium();
      const ctx = await chromium.newContext({ locale: "en-US" });
      try {
        await ctx.route("**/*", (route) =>
          new URL(route.request().url()).host === new URL(server.base).host ? route.continue() : route.abort(),
        );
        const page = await ctx.newPage();
        await virtualAuthenticator(ctx, page);
        await page.goto(authorizeUrl(DEMO, { lang: "en" }));
        await heading(page, "Confirm it is you");
        await page.getByText("SKT", { exact: true }).click();
        await page.getByLabel("Name").fill(HAN.name);
        await page.getByLabel("Mobile number").fill(HAN.phone);
        await page.getByLabel("Agree to all").check();
        await page.getByRole("button", { name: /Send code|Get code/ }).click();
        await page.getByLabel(/code/i).fill(await outboxCode(server.base, HAN.phone));
        await page.getByRole("button", { name: "Confirm", exact: true }).click();
        const make = page.getByRole("button", { name: "Make a passkey" });
        await agreeIfAsked(page.getByRole("button", { name: /Agree/ }), () => make.isVisible());
        // made: the service sends the browser on to the app (whose host this context does not reach)
        const toApp = page.waitForRequest((r) => r.url().startsWith(DEMO.redirect));
        await make.click();
        await toApp;
      } finally {
        await ctx.close();
      }

      // once the new key signs: another change and a verification, signed by it, verify too
      await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(key.signs_from) + 1000 - Date.now())));
      expect((await adminCall("DELETE", `/admin/directory/${SMITH.phone}`)).status).toBe(200);
      await verify("push-2");
      await push.waitFor(8, 60_000);
      expect(push.failures).toEqual([]);
      const changes = push.received.filter((r) => r.type === `${CAEP}credential-change`);
      expect(changes).toHaveLength(2);
      const sim = changes.find((r) => r.event.credential_type === "phone-sms")!;
      expect(sim.event).toMatchObject({
        credential_type: "phone-sms",
        change_type: "update",
        event_timestamp: simChangedAt.getTime() / 1000,
      });
      expect(sim.event.reason_admin).toBeTruthy();
      const passkey = changes.find((r) => r.event.credential_type !== "phone-sms")!;
      expect(passkey.event).toMatchObject({ credential_type: "fido2-platform", change_type: "create" });
      expect(passkey.sub_id).not.toEqual(sim.sub_id);
      const later = push.received.slice(3).filter((r) => r.type !== `${CAEP}credential-change`);
      expect(later.map((r) => r.type).sort()).toEqual(
        [`${CAEP}session-revoked`, `${RISC}account-purged`, VERIFICATION].sort(),
      );
      expect(later.every((r) => r.kid === key.kid)).toBe(true);
      expect(key.kid).not.toBe(oldKid);
      for (const r of push.received.filter((x) => x.type !== VERIFICATION)) {
        expect(r.sub_id.format).toBe("opaque");
        expect(r.sub_id.id).toMatch(/^[A-Za-z0-9._~-]{1,128}$/);
      }
      expect(new Set(push.received.map((r) => r.jti)).size).toBe(8);
      const text = JSON.stringify(push.received);
      for (const secret of [
        HONG.phone,
        HONG.name,
        SMITH.phone,
        SMITH.name,
        CHOI.phone,
        CHOI.name,
        CHOI_CI,
        "01055509012",
        "한지민",
      ])
        expect(text).not.toContain(secret);
    } finally {
      await push.stop();
    }
  }, 150_000);
});
