// The Python carrier of docs/carrier-api.md ("Verifying a request and signing the answer"), taken
// from the page as a carrier would copy it, run with python3: it compiles, reproduces the page's
// example exchange, refuses what is not the request, and signs people in against the real service
// (`npm start` with CARRIER_DIRECTORY=http) during a change of secret, receiving the name in the
// form the page promises.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createHmac } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startServer, type Server } from "./server";
import { signIn } from "./signin-driver";

const root = join(import.meta.dirname, "..", "..");
const dir = mkdtempSync(join(tmpdir(), "carrier-python-"));

/** The page's Python block, as a carrier copies it. */
function sample(): string {
  const page = readFileSync(join(root, "docs", "carrier-api.md"), "utf8");
  const section = page.slice(page.indexOf("## Verifying a request and signing the answer (Python)"));
  const block = /```python\n([\s\S]*?)\n```/.exec(section);
  if (!block) throw new Error("no Python block under docs/carrier-api.md's Python section");
  return block[1]!;
}

// One request through the sample's `handle`, or (serve) the sample behind http.server, printing
// one JSON line per request: the status it gave and the name received.
const HARNESS = `
import base64, json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from carrier_sample import handle

def call(cfg):
    people = cfg.get("people", {})
    status, headers, body = handle(cfg["secret"].encode(), cfg["headers"], base64.b64decode(cfg["raw"]),
                                   people.get, now=cfg["now"])
    return {"status": status, "headers": headers, "body": body.decode()}

if sys.argv[1] == "call":
    print(json.dumps(call(json.loads(sys.stdin.read()))))
else:
    cfg = json.loads(sys.argv[2])
    class Carrier(BaseHTTPRequestHandler):
        def do_POST(self):
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            status, headers, body = handle(cfg["secret"].encode(), self.headers, raw, cfg["people"].get)
            try:
                name = json.loads(raw).get("name")
            except Exception:
                name = None
            print(json.dumps({"status": status, "name": name}), flush=True)
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *args):
            pass
    ThreadingHTTPServer(("127.0.0.1", cfg["port"]), Carrier).serve_forever()
`;

beforeAll(() => {
  writeFileSync(join(dir, "carrier_sample.py"), sample());
  writeFileSync(join(dir, "harness.py"), HARNESS);
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Handled {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One request through the sample's handle(). */
function handle(cfg: { secret: string; headers: Record<string, string>; raw: Buffer; now: number; people?: object }) {
  const run = spawnSync("python3", [join(dir, "harness.py"), "call"], {
    cwd: dir,
    input: JSON.stringify({ ...cfg, raw: cfg.raw.toString("base64") }),
    encoding: "utf8",
  });
  if (run.error) throw run.error;
  expect(run.stderr).toBe("");
  return JSON.parse(run.stdout) as Handled;
}

const sign = (secret: string, ts: string, body: Buffer) =>
  "sha256=" +
  createHmac("sha256", secret)
    .update(Buffer.concat([Buffer.from(`${ts}.`), body]))
    .digest("hex");

// The example exchange of docs/carrier-api.md, copied from the page.
const SECRET = "example-carrier-secret-0123456789abcdef";
const REQUEST = Buffer.from(
  '{"telcoCd":"K","name":"김영희","phoneNo":"01023456789","requestId":"3f1c2a9e-5b7d-4e21-9c3a-8d6f0b1e2a47"}',
);
const KIM = {
  telcoCd: "K",
  name: "김영희",
  ci: "nfcL9oLsk2LIvJ91w6793nPDexqM2v9Ld+dwpwr6fgiE0ZR8+ks4VLdZnGE7MUB2ki0rNr84HA39rRUjq5O+Sw==",
  gender: "F",
  birth: "2001-12-01",
  foreign: "L",
};

describe("the Python carrier of docs/carrier-api.md", () => {
  it("compiles, and reproduces the page's example exchange byte for byte with the header names in any case; the signature in upper case is refused", () => {
    const compiled = spawnSync("python3", ["-m", "py_compile", join(dir, "carrier_sample.py")], { encoding: "utf8" });
    expect(compiled.error).toBeUndefined();
    expect(compiled.stderr).toBe("");
    expect(compiled.status).toBe(0);
    for (const [ts, sig] of [
      ["X-Signature-Timestamp", "X-Signature"],
      ["x-signature-timestamp", "x-signature"],
    ]) {
      const headers = {
        [ts!]: "1767225600",
        [sig!]: "sha256=afb28f700f7f117ebe8f064b7d858918b8cd166716e54bb830fb5e8a2037f954",
      };
      const yes = handle({ secret: SECRET, headers, raw: REQUEST, now: 1767225601, people: { "01023456789": KIM } });
      expect(yes).toEqual({
        status: 200,
        headers: {
          "Content-Type": "application/json",
          "X-Signature-Timestamp": "1767225601",
          "X-Signature": "sha256=461aff81c7216e93e22a4a9528122829a8bd91dc8e808d36488a42eff1bf61fd",
        },
        body: '{"requestId":"3f1c2a9e-5b7d-4e21-9c3a-8d6f0b1e2a47","match":true,"ci":"nfcL9oLsk2LIvJ91w6793nPDexqM2v9Ld+dwpwr6fgiE0ZR8+ks4VLdZnGE7MUB2ki0rNr84HA39rRUjq5O+Sw==","gender":"F","birth":"2001-12-01","foreign":"L"}',
      });
      const no = handle({ secret: SECRET, headers, raw: REQUEST, now: 1767225601 });
      expect(no.body).toBe('{"requestId":"3f1c2a9e-5b7d-4e21-9c3a-8d6f0b1e2a47","match":false}');
      expect(no.headers["X-Signature"]).toBe("sha256=a7f4d6ea018aa6f39965d172e859e312dc815eabfb1e6c67e54e896cbceb5af4");
    }
    // a Java or .NET helper's upper-case hex is another string
    const good = "sha256=afb28f700f7f117ebe8f064b7d858918b8cd166716e54bb830fb5e8a2037f954";
    const upper = { "X-Signature-Timestamp": "1767225600", "X-Signature": "sha256=" + good.slice(7).toUpperCase() };
    expect(handle({ secret: SECRET, headers: upper, raw: REQUEST, now: 1767225601 }).status).toBe(401);
  });

  it("refuses, with 400 and never an exception, a well-signed body that is not a JSON object of the four string fields", () => {
    for (const text of [
      "[]",
      '"telcoCd"',
      "1",
      "null",
      "not json",
      '{"telcoCd":"K","name":"김영희","phoneNo":1023456789,"requestId":"3f1c2a9e-5b7d-4e21-9c3a-8d6f0b1e2a47"}',
    ]) {
      const raw = Buffer.from(text);
      const headers = { "X-Signature-Timestamp": "1767225600", "X-Signature": sign(SECRET, "1767225600", raw) };
      expect(handle({ secret: SECRET, headers, raw, now: 1767225601 }).status, text).toBe(400);
    }
    const raw = Buffer.from([0x7b, 0xff, 0x7d]); // not UTF-8
    const headers = { "X-Signature-Timestamp": "1767225600", "X-Signature": sign(SECRET, "1767225600", raw) };
    expect(handle({ secret: SECRET, headers, raw, now: 1767225601 }).status).toBe(400);
  });
});

describe("the Python carrier against the service (npm start, CARRIER_DIRECTORY=http)", () => {
  const OLD = "service-old-secret-0123456789abcdefABCDEF";
  const NEW = "service-new-secret-0123456789abcdefGHIJKL";
  const phone = "01077770001";
  let carrier: ChildProcess;
  let server: Server;
  const seen: { status: number; name: string | null }[] = [];

  beforeAll(async () => {
    const port = await freePort();
    const people = { [phone]: { ...KIM, name: "홍길동" } };
    // the carrier has switched to the new secret first; the service is part way through the change
    carrier = spawn("python3", [join(dir, "harness.py"), "serve", JSON.stringify({ port, secret: NEW, people })], {
      cwd: dir,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    carrier.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      for (let i = out.indexOf("\n"); i >= 0; i = out.indexOf("\n")) {
        seen.push(JSON.parse(out.slice(0, i)));
        out = out.slice(i + 1);
      }
    });
    const vars = {
      CARRIER_DIRECTORY: "http",
      CARRIER_API_URL: `http://127.0.0.1:${port}/verify`,
      CARRIER_API_SECRET: OLD,
      CARRIER_API_SECRET_NEXT: NEW,
    };
    server = await startServer({ args: Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]) });
  });
  afterAll(async () => {
    await server?.stop();
    carrier?.kill();
  });

  it('signs in "홍길동".normalize("NFD"): the carrier receives the name in NFC, checks X-Signature-Next, and its answer under the new secret is accepted', async () => {
    const authorize = `${server.base}/oauth2/authorize?${new URLSearchParams({
      response_type: "code",
      client_id: "demo-client",
      redirect_uri: "https://demo.example/callback",
      state: "s",
    })}`;
    const done = await signIn(authorize, { telco: "K", name: "홍길동".normalize("NFD"), phone, code: "" });
    expect(done.steps).toEqual(["identify", "verify", "consent"]);
    expect(done.code).toBeTruthy();
    expect(seen.map((s) => [s.status, s.name])).toEqual([[200, "홍길동"]]);
  });
});
