// The abuse run's SMS gateway (docs/benchmarks.md "Abuse"): a Node receiver on loopback for the
// service's `webhook` gateway (SMS_SENDER=webhook, docs/signin.md "SMS interface"). It checks each
// message as a bridge must (the HMAC-SHA256 of `timestamp + "." + body` under SMS_WEBHOOK_SECRET,
// a timestamp at most 300 s off) and keeps the last code sent to each number, so the simulation
// knows which codes went to whom and can type a right one.

import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

const MAX_SKEW_SECONDS = 300;
const MAX_BODY = 16 * 1024;

/** The service's signature of a webhook body (workers/provider/store/sms/gateways.ts `signWebhook`). */
export function webhookSignature(secret, timestamp, body) {
  return "sha256=" + createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
}

/**
 * Listens on 127.0.0.1 (a free port). `codes` maps a number to the last code sent to it; `sent`
 * counts the messages accepted, `refused` those whose signature or timestamp was wrong (each a
 * failure of the run: the service signs every message).
 * @param {string} secret
 */
export async function startSmsReceiver(secret) {
  /** @type {Map<string, { code: string; count: number }>} */
  const codes = new Map();
  const tally = { sent: 0, refused: 0, /** @type {string | null} */ firstRefusal: null };
  const refuse = (res, why) => {
    tally.refused++;
    tally.firstRefusal ??= why;
    res.writeHead(401).end();
  };
  const server = createServer((req, res) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    const chunks = [];
    let size = 0;
    req.on("data", (c) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on("end", () => {
      if (size > MAX_BODY) return refuse(res, "body too large");
      const body = Buffer.concat(chunks).toString("utf8");
      const ts = String(req.headers["x-signature-timestamp"] ?? "");
      const sig = Buffer.from(String(req.headers["x-signature"] ?? ""));
      const want = Buffer.from(webhookSignature(secret, ts, body));
      if (sig.length !== want.length || !timingSafeEqual(sig, want)) return refuse(res, "wrong signature");
      if (!/^\d+$/.test(ts) || Math.abs(Date.now() / 1000 - Number(ts)) > MAX_SKEW_SECONDS)
        return refuse(res, `stale timestamp ${ts}`);
      /** @type {{ to?: unknown; code?: unknown }} */
      let m;
      try {
        m = JSON.parse(body);
      } catch {
        return refuse(res, "body is not JSON");
      }
      if (typeof m.to !== "string" || typeof m.code !== "string") return refuse(res, "no number or code");
      const seen = codes.get(m.to);
      codes.set(m.to, { code: m.code, count: (seen?.count ?? 0) + 1 });
      tally.sent++;
      res.writeHead(200, { "Content-Type": "application/json" }).end('{"ok":true}');
    });
  });
  server.keepAliveTimeout = 30_000;
  const port = await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(/** @type {import("node:net").AddressInfo} */ (server.address()).port));
  });
  return {
    url: `http://127.0.0.1:${port}/sms`,
    codes,
    tally,
    /** Forgets every code and count (the next phase starts from none). */
    reset() {
      codes.clear();
      tally.sent = 0;
      tally.refused = 0;
      tally.firstRefusal = null;
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r(undefined));
      }),
  };
}

/**
 * The operator's inbound SMS gateway as the simulated people reach it: a text from `from` to the
 * service's receiving number, delivered to `POST /sms/inbound` signed as a gateway does
 * (docs/signin.md "A text the person sends": HMAC-SHA256 of `timestamp + "." + body` under
 * SMS_INBOUND_SECRET), sent on a domestic network, received now.
 * @param {string} url the service
 * @param {string} number SMS_INBOUND_NUMBER
 * @param {string} secret SMS_INBOUND_SECRET
 */
export function inboundGateway(url, number, secret) {
  const tally = { sent: 0, accepted: 0, other: /** @type {Record<string, number>} */ ({}) };
  return {
    tally,
    /** Delivers one text; throws when the service does not answer 200. */
    async text(from, body) {
      const ts = String(Math.floor(Date.now() / 1000));
      const json = JSON.stringify({
        from,
        to: number.replace(/\D/g, ""),
        body,
        receivedAt: new Date().toISOString(),
        domestic: true,
      });
      tally.sent++;
      const res = await fetch(new URL("/sms/inbound", url), {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "X-Signature-Timestamp": ts,
          "X-Signature": webhookSignature(secret, ts, json),
        },
        body: json,
        signal: AbortSignal.timeout(60_000),
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`inbound text: ${res.status} ${text.slice(0, 200)}`);
      const result = JSON.parse(text).result;
      if (result === "accepted") tally.accepted++;
      else tally.other[result] = (tally.other[result] ?? 0) + 1;
    },
  };
}
