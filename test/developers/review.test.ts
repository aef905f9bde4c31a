// Review and the live stage (docs/developers.md "Review") through HTTP in workerd:
// - an owner submits a testing app; editors see it in the queue (API and /console/reviews) with its
//   items, purposes, name and redirect URIs; approval makes it live with what was reviewed, and
//   then anyone signs in; a rejection carries a reason the developer reads;
// - a review is decided once, whatever races;
// - on a live app a change of name, items, purposes or retention is a review, the app keeps working
//   with what was approved; redirect URIs and the secret need a sign-in from the last 10 minutes,
//   apply at once, and the other owners are told on their next visit, once;
// - an editor invites an owner for an app no developer owns; never for an owned app.
import { afterEach, describe, expect, it, vi } from "vitest";
import { admin } from "../support/admin";
import { auditEvents } from "../support/audit";
import { DEMO } from "../support/helpers";
import { lastCode } from "../support/directory";
import { Browser } from "../support/signin";
import { api, createApp, csrfOf, developer, identifyAt, person, post, signIn, SHOP } from "../support/developers";

afterEach(() => {
  vi.useRealTimers();
});

const P = "0106";

async function submitted() {
  const owner = await developer(P);
  const made = await createApp(owner.b, owner.csrf);
  const res = await api(owner.b, owner.csrf, "POST", `/developers/api/apps/${made.client_id}/review`);
  expect(res.status, await res.clone().text()).toBe(201);
  const review = (await res.json()) as { id: string; state: string };
  return { owner, made, review };
}

async function queued(clientId: string) {
  const q = (await (await admin("GET", "/admin/reviews")).json()) as {
    reviews: { id: string; client_id: string; proposed: { name: string; items: string[] }; redirect_uris: string[] }[];
  };
  return q.reviews.find((r) => r.client_id === clientId);
}

describe("review", () => {
  it("an owner submits; the queue shows what the app asks for; approval makes it live and then anyone signs in; the owner is told once", async () => {
    const { owner, made, review } = await submitted();
    expect(review.state).toBe("pending");
    const q = await queued(made.client_id);
    expect(q).toMatchObject({ proposed: { name: SHOP.name }, redirect_uris: SHOP.redirect_uris });
    expect([...q!.proposed.items].sort()).toEqual([...SHOP.items].sort());
    // a second submission while one is pending
    expect((await api(owner.b, owner.csrf, "POST", `/developers/api/apps/${made.client_id}/review`)).status).toBe(400);
    const stranger = await person(P);
    expect((await identifyAt(made.client_id, stranger)).status).toBe(403);
    const ok = await admin("POST", `/admin/reviews/${review.id}/approve`, { json: {} });
    expect(ok.status, await ok.clone().text()).toBe(200);
    const app = (await (await api(owner.b, owner.csrf, "GET", `/developers/api/apps/${made.client_id}`)).json()) as {
      stage: string;
    };
    expect(app.stage).toBe("live");
    expect((await identifyAt(made.client_id, stranger)).form?.step).toBe("verify");
    const home = await owner.b.page(await owner.b.fetch("/developers"));
    expect(home.html).toContain("검수가 승인되었습니다");
    const again = await owner.b.page(await owner.b.fetch("/developers"));
    expect(again.html).not.toContain("검수가 승인되었습니다");
    const [approved] = await auditEvents({ type: "review.approved", clientId: made.client_id });
    expect(JSON.parse(approved!.detail!).actor).toBe("token:ADMIN_TOKEN");
  });

  it("a rejection needs a reason, which the developer reads on the app's page; the app stays in testing", async () => {
    const { owner, made, review } = await submitted();
    expect((await admin("POST", `/admin/reviews/${review.id}/reject`, { json: {} })).status).toBe(400);
    const res = await admin("POST", `/admin/reviews/${review.id}/reject`, {
      json: { reason: "이용 목적을 구체적으로 적어 주세요." },
    });
    expect(res.status).toBe(200);
    const page = await owner.b.page(await owner.b.fetch(`/developers/apps/${made.client_id}`));
    expect(page.html).toContain("이용 목적을 구체적으로 적어 주세요.");
    expect(page.html).toContain("테스트");
    expect((await identifyAt(made.client_id, await person(P))).status).toBe(403);
  });

  it("a review is decided once: five approvals and five rejections at once, exactly one succeeds", async () => {
    const { review } = await submitted();
    const calls = Array.from({ length: 10 }, (_, i) =>
      i % 2 === 0
        ? admin("POST", `/admin/reviews/${review.id}/approve`, { json: {} })
        : admin("POST", `/admin/reviews/${review.id}/reject`, { json: { reason: "no" } }),
    );
    const statuses = (await Promise.all(calls)).map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(9);
  });

  it("in the console, an editor sees the queue and approves; a viewer sees it with no button", async () => {
    const { made, review } = await submitted();
    const op = await person(P);
    expect((await admin("POST", "/admin/operators", { json: { phone: op.phone, role: "editor" } })).status).toBe(201);
    const b = new Browser();
    const p1 = await b.page(await b.fetch("/console"));
    const p2 = await b.submit(p1, { telcoCd: op.telco, name: op.name, phoneNo: op.phone });
    const p3 = await b.submit(p2, { otp: await lastCode(op.phone) });
    const home = await b.page(await b.fetch(p3.res.headers.get("Location")!));
    const queue = await b.page(await b.fetch("/console/reviews?lang=en"));
    expect(queue.status).toBe(200);
    expect(queue.html).toContain(made.client_id);
    expect(queue.html).toContain("https://shop.example/callback");
    const done = await b.page(
      await post(b, `/console/reviews/${review.id}/approve`, { csrf: csrfOf(home), lang: "en" }),
    );
    expect(done.status).toBe(200);
    expect(done.html).toContain("Approved: the app is live.");
    const [approved] = await auditEvents({ type: "review.approved", clientId: made.client_id });
    expect(JSON.parse(approved!.detail!).actor).toMatch(/^operator:op_/);
    // a viewer sees the queue with no decision to make
    const next = await submitted();
    const viewer = await person(P);
    expect((await admin("POST", "/admin/operators", { json: { phone: viewer.phone, role: "viewer" } })).status).toBe(
      201,
    );
    const vb = new Browser();
    const v1 = await vb.page(await vb.fetch("/console"));
    const v2 = await vb.submit(v1, { telcoCd: viewer.telco, name: viewer.name, phoneNo: viewer.phone });
    await vb.submit(v2, { otp: await lastCode(viewer.phone) });
    const seen = await vb.page(await vb.fetch("/console/reviews"));
    expect(seen.html).toContain(next.made.client_id);
    expect(seen.html).not.toContain(`/console/reviews/${next.review.id}/approve`);
  });
});

describe("a live app", () => {
  async function live() {
    const s = await submitted();
    expect((await admin("POST", `/admin/reviews/${s.review.id}/approve`, { json: {} })).status).toBe(200);
    return s;
  }

  it("a change of its name is a review: the sign-in shows the approved name until the change is approved", async () => {
    const { owner, made } = await live();
    const res = await api(owner.b, owner.csrf, "PATCH", `/developers/api/apps/${made.client_id}`, { name: "New Shop" });
    expect(res.status).toBe(200);
    const j = (await res.json()) as { name: string; review: { state: string; proposed: { name: string } } };
    expect(j.name).toBe(SHOP.name);
    expect(j.review).toMatchObject({ state: "pending", proposed: { name: "New Shop" } });
    const q = await queued(made.client_id);
    const firstPage = async () => {
      const q = new URLSearchParams({
        response_type: "code",
        client_id: made.client_id,
        redirect_uri: SHOP.redirect_uris[0]!,
        state: "s",
      });
      return (await new Browser().page(await new Browser().fetch(`/oauth2/authorize?${q}`))).html;
    };
    expect(await firstPage()).toContain(SHOP.name);
    expect(await firstPage()).not.toContain("New Shop");
    expect((await admin("POST", `/admin/reviews/${(q as { id: string }).id}/approve`, { json: {} })).status).toBe(200);
    const after = (await (await api(owner.b, owner.csrf, "GET", `/developers/api/apps/${made.client_id}`)).json()) as {
      name: string;
    };
    expect(after.name).toBe("New Shop");
    // within the client cache's 10 s the sign-in shows it (this isolate forgot its copy at once)
    expect(await firstPage()).toContain("New Shop");
  });

  it("new redirect URIs and a new secret need a sign-in from the last 10 minutes; then they apply and the other owner is told once", async () => {
    const { owner, made } = await live();
    const mate = await person(P);
    await api(owner.b, owner.csrf, "POST", `/developers/api/apps/${made.client_id}/team`, {
      phone: mate.phone,
      role: "owner",
    });
    const mb = new Browser();
    const mcsrf = csrfOf(await signIn(mb, mate));
    expect((await api(mb, mcsrf, "POST", `/developers/api/invites/${made.client_id}/accept`)).status).toBe(200);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 11 * 60_000);
    const uris = { redirect_uris: ["https://shop.example/callback", "https://shop.example/cb2"] };
    const stale = await api(owner.b, owner.csrf, "PATCH", `/developers/api/apps/${made.client_id}`, uris);
    expect(stale.status).toBe(403);
    expect(stale.headers.get("Console-Reauth")).toBe("1");
    const staleRotate = await api(
      owner.b,
      owner.csrf,
      "POST",
      `/developers/api/apps/${made.client_id}/rotate-secret`,
      {},
    );
    expect(staleRotate.status).toBe(403);
    // the page says to sign in again
    const page = await owner.b.page(
      await post(owner.b, `/developers/apps/${made.client_id}/rotate-secret`, { csrf: owner.csrf }),
    );
    expect(page.status).toBe(403);
    expect(page.html).toContain("다시 로그인해 주세요");
    const fresh = await signIn(owner.b, owner.who, `?reauth=1&next=/developers/apps/${made.client_id}`);
    const csrf = csrfOf(fresh);
    const ok = await api(owner.b, csrf, "PATCH", `/developers/api/apps/${made.client_id}`, uris);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { redirect_uris: string[] }).redirect_uris).toEqual(uris.redirect_uris);
    const rot = await api(owner.b, csrf, "POST", `/developers/api/apps/${made.client_id}/rotate-secret`, {
      grace_seconds: 0,
    });
    expect(rot.status).toBe(200);
    expect(((await rot.json()) as { client_secret: string }).client_secret).toMatch(/^[A-Za-z0-9]{64}$/);
    const told = await mb.page(await mb.fetch("/developers?lang=en"));
    expect(told.html).toContain("Another owner changed the redirect URIs of Demo Shop");
    expect(told.html).toContain("Another owner issued a new client secret for Demo Shop");
    expect((await mb.page(await mb.fetch("/developers?lang=en"))).html).not.toContain("Another owner");
    // the one who acted is not told
    expect((await owner.b.page(await owner.b.fetch("/developers?lang=en"))).html).not.toContain("Another owner");
  });
});

describe("an app no developer owns", () => {
  it("an editor invites an owner for an operator's app; the person accepts on /developers and manages it; an owned app refuses", async () => {
    const made = (await (
      await admin("POST", "/admin/clients", { json: { name: "Ops App", redirect_uris: ["https://ops.example/cb"] } })
    ).json()) as { client_id: string };
    const who = await person(P);
    const res = await admin("POST", `/admin/clients/${made.client_id}/owner`, { json: { phone: who.phone } });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(await res.clone().text()).not.toContain(who.phone);
    const b = new Browser();
    const home = await signIn(b, who);
    expect(home.html).toContain("Ops App");
    const csrf = csrfOf(home);
    expect((await api(b, csrf, "POST", `/developers/api/invites/${made.client_id}/accept`)).status).toBe(200);
    const app = (await (await api(b, csrf, "GET", `/developers/api/apps/${made.client_id}`)).json()) as {
      stage: string;
      role: string;
    };
    expect(app).toMatchObject({ stage: "live", role: "owner" });
    expect((await admin("POST", `/admin/clients/${made.client_id}/owner`, { json: { phone: who.phone } })).status).toBe(
      400,
    );
    // the seed's demo app has no owner: the console's app page offers the invitation
    expect((await admin("GET", `/admin/clients/${DEMO.clientId}`)).status).toBe(200);
  });
});
