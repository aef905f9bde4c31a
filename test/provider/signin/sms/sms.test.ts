// The SMS senders (docs/signin.md "SMS interface"): the signed webhook, the dev outbox and its page.
import { describe, expect, it, vi } from "vitest";
import { insertSubscriber } from "../../../support/shards";
import { hmacSha256Hex } from "../../../../workers/core/crypto";
import { outboxSender } from "../../../../workers/provider/store/sms/outbox";
import { readOutbox } from "../../../../workers/provider/store/sms-outbox";
import { signWebhook, webhookSender } from "../../../../workers/provider/store/sms/gateways";
import { env } from "../../../support/env";
import { bodyText, call } from "../../../support/helpers";
import { alertText, Browser } from "../../../support/signin";

describe("SMS senders", () => {
  it("the webhook sender POSTs JSON signed with HMAC-SHA256 over timestamp.body", async () => {
    const seen: Request[] = [];
    const sender = webhookSender({
      url: "https://sms.example/hook",
      secret: "whsec-test",
      timeoutMs: 1000,
      fetcher: async (input, init) => {
        seen.push(new Request(input as string, init));
        return new Response("ok");
      },
    });
    await sender.send({ to: "01099990000", text: "hello 123456", code: "123456", lang: "ko" });
    expect(seen).toHaveLength(1);
    const req = seen[0]!;
    expect(req.method).toBe("POST");
    expect(req.url).toBe("https://sms.example/hook");
    expect(req.headers.get("Content-Type")).toBe("application/json");
    const body = await bodyText(req);
    const ts = req.headers.get("X-Signature-Timestamp")!;
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(5);
    expect(req.headers.get("X-Signature")).toBe("sha256=" + (await hmacSha256Hex("whsec-test", `${ts}.${body}`)));
    expect(req.headers.get("X-Signature")).toBe(await signWebhook("whsec-test", Number(ts), body));
    const msg = JSON.parse(body) as Record<string, string>;
    expect(msg).toMatchObject({ to: "01099990000", text: "hello 123456", code: "123456", lang: "ko" });
    expect(msg.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(msg.sentAt!)).not.toBeNaN();
  });

  it("a non-2xx webhook answer throws (the page then says the code could not be sent)", async () => {
    const sender = webhookSender({
      url: "https://sms.example/hook",
      secret: "s",
      timeoutMs: 1000,
      fetcher: async () => new Response("no", { status: 500 }),
    });
    await expect(sender.send({ to: "01099990000", text: "x", code: "000000", lang: "en" })).rejects.toThrow(/500/);
  });

  it("a failing gateway answers 503 with the could-not-send message; the code is withdrawn and a resend is not held back by the cooldown", async () => {
    await insertSubscriber({ telco: "S", phone: "01077770001", name: "실패", gender: "M", ci: "CI-fail" });
    // The SMS gateway (not the platform) is stood in for: it answers 502 to the signed POST.
    const urls: string[] = [];
    const gateway = vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      const url = new Request(input as RequestInfo).url;
      urls.push(url);
      if (url === "https://sms-gateway.example/hook") return new Response("down", { status: 502 });
      throw new Error("unexpected outbound fetch");
    });
    const b = new Browser({
      vars: {
        SMS_SENDER: "webhook",
        SMS_WEBHOOK_URL: "https://sms-gateway.example/hook",
        SMS_WEBHOOK_SECRET: "sms-webhook-secret-0123",
      },
    });
    let p, again;
    try {
      p = await b.submit(await b.authorize(), { telcoCd: "S", name: "실패", phoneNo: "01077770001" });
      again = await b.submit(p, { resend: "Y" });
    } finally {
      gateway.mockRestore();
    }
    expect(urls).toEqual(["https://sms-gateway.example/hook", "https://sms-gateway.example/hook"]);
    expect(p.status).toBe(503);
    expect(p.form?.step).toBe("verify");
    expect(alertText(p.html)).toBe("인증번호를 보내지 못했습니다. 잠시 뒤에 다시 시도하세요.");
    // the resend tried the gateway again at once (no 30 s cooldown for a code never sent)
    expect(again.status).toBe(503);
    // nothing was sent, so no code can be right
    const wrong = await b.submit(again, { otp: "000000" });
    expect(alertText(wrong.html)).toBe("이 인증번호는 더 이상 쓸 수 없습니다. 인증번호를 다시 받으세요.");
  });

  it("webhook without its URL is a configuration error: 500 server_error with the fixed message", async () => {
    await insertSubscriber({ telco: "S", phone: "01077770002", name: "설정", gender: "M", ci: "CI-conf" });
    const b = new Browser({ vars: { SMS_SENDER: "webhook" } });
    const res = await b.fetch("/oauth2/authorize", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        ...(await b.authorize()).form!.hidden,
        telcoCd: "S",
        name: "설정",
        phoneNo: "01077770002",
        carrierTerms: "Y",
      }),
    });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: "server_error", message: "A temporary error occurred. Retry later." });
  });

  it("the outbox keeps messages newest first; GET /dev/outbox shows them escaped (HTML) or as JSON", async () => {
    await outboxSender(env).send({ to: "01055550000", text: "<b>code</b> 654321", code: "654321", lang: "ko" });
    const rows = await readOutbox(env, 5);
    expect(rows[0]).toMatchObject({ phone: "01055550000", body: "<b>code</b> 654321" });
    const page = await call("/dev/outbox");
    expect(page.status).toBe(200);
    expect(page.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    const text = await page.text();
    expect(text).toContain("&lt;b&gt;code&lt;/b&gt; 654321");
    const j = await call("/dev/outbox", { headers: { Accept: "application/json" } });
    const body = (await j.json()) as { messages: { to: string; text: string }[] };
    expect(body.messages[0]).toMatchObject({ to: "01055550000", text: "<b>code</b> 654321" });
  });

  it("GET /dev/outbox is 404 without DEV_MODE", async () => {
    const b = new Browser({ vars: { DEV_MODE: "false" } });
    // https: without DEV_MODE, plain http is refused even on localhost
    const res = await b.fetch("https://localhost:8787/dev/outbox");
    expect(res.status).toBe(404);
  });
});
