// The abuse run's traffic and figures (capacity/lib/abuse-model.mjs), without the service: each bot
// profile draws the traffic it says, people behave as the model's shares say, and a profile's row
// reads its figures from the phases' outcomes under the names docs/bench/abuse.json carries.
import { describe, expect, it } from "vitest";
import {
  PROFILES,
  parseAbuseArgs,
  phaseFigures,
  plan,
  profileRow,
  withProfile,
} from "../../capacity/lib/abuse-model.mjs";

const people = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => ({
    telcoCd: "K",
    phoneNo: `010${tag}${String(i).padStart(4, "0")}`,
    name: `p${i}`,
  }));

function traffic(profile: string, extra: string[] = []) {
  const o = withProfile(parseAbuseArgs(["--short", ...extra]), profile);
  return { o, ...plan(o, people(o.pairs, "1"), people(o.people, "2"), people(o.sims, "3")) };
}

describe("bot profiles", () => {
  it("names the issue's profiles: baseline, a solver farm, fresh blocks, every app, padding, boundaries, human-paced", () => {
    expect(Object.keys(PROFILES)).toEqual([
      "baseline",
      "solver-farm",
      "fresh-blocks",
      "every-app",
      "padding",
      "boundaries",
      "human-paced",
    ]);
  });

  it("fresh blocks: no two of the bot's sessions share a /24; the baseline reuses its few", () => {
    const fresh = traffic("fresh-blocks").sessions.filter((s) => s.kind === "bot");
    expect(new Set(fresh.map((s) => s.block)).size).toBe(fresh.length);
    expect(fresh.every((s) => s.solves)).toBe(true);
    const base = traffic("baseline").sessions.filter((s) => s.kind === "bot");
    expect(new Set(base.map((s) => s.block)).size).toBeLessThanOrEqual(20);
  });

  it("every app: the bot's sessions land on every app; the others attack the first only", () => {
    const all = traffic("every-app").sessions.filter((s) => s.kind === "bot");
    expect(new Set(all.map((s) => s.app)).size).toBe(20);
    expect(
      traffic("solver-farm")
        .sessions.filter((s) => s.kind === "bot")
        .every((s) => s.app === 0),
    ).toBe(true);
  });

  it("padding: 35% more sessions from the bot's own SIMs, which type their codes and can text", () => {
    const { o, sessions } = traffic("padding");
    const sims = sessions.filter((s) => s.kind === "bot" && s.holdsNumber);
    expect(sims).toHaveLength(Math.round(o.pairs * 0.35));
    expect(new Set(sims.map((s) => s.person.phoneNo)).size).toBe(o.sims);
    expect(sims.every((s) => s.typesCode && s.texts)).toBe(true);
    // for the leaked numbers it holds no phone: it cannot text
    expect(sessions.filter((s) => s.kind === "bot" && !s.holdsNumber).some((s) => s.texts)).toBe(false);
  });

  it("boundaries: every session of the bot starts within 5 s after a 10-minute boundary", () => {
    const bot = traffic("boundaries").sessions.filter((s) => s.kind === "bot");
    for (const s of bot) expect(s.start % 600_000).toBeLessThan(5_000);
  });

  it("human-paced: the bot fills the first page as slowly as a person", () => {
    const bot = traffic("human-paced").sessions.filter((s) => s.kind === "bot");
    expect(Math.min(...bot.map((s) => s.pace.fill))).toBeGreaterThanOrEqual(8_000);
  });
});

describe("people as they are", () => {
  it("60% on phones; about 90% type their code; texting 90% on phones and 75% on desktops; 30% come back after a refusal", () => {
    const real = traffic("baseline", ["--people", "4000"]).sessions.filter((s) => s.kind === "real");
    const share = (xs: typeof real, f: (s: (typeof real)[number]) => boolean) => xs.filter(f).length / xs.length;
    expect(share(real, (s) => s.device === "phone")).toBeCloseTo(0.6, 1);
    expect(share(real, (s) => s.typesCode)).toBeCloseTo(0.9, 1);
    const phones = real.filter((s) => s.device === "phone");
    const desktops = real.filter((s) => s.device === "desktop");
    expect(share(phones, (s) => s.texts)).toBeCloseTo(0.9, 1);
    expect(share(desktops, (s) => s.texts)).toBeCloseTo(0.75, 1);
    expect(share(real, (s) => s.returns)).toBeCloseTo(0.3, 1);
    // JavaScript off: a challenge cannot be answered
    expect(real.filter((s) => s.jsOff).every((s) => !s.solves)).toBe(true);
  });

  it("returning on a browser that proved their number: none by default, 30% at --returning-share 0.3, and every other choice the same", () => {
    const none = traffic("baseline", ["--people", "4000"]).sessions;
    const some = traffic("baseline", ["--people", "4000", "--returning-share", "0.3"]).sessions;
    expect(none.filter((s) => s.returning)).toHaveLength(0);
    const real = some.filter((s) => s.kind === "real");
    expect(real.filter((s) => s.returning).length / real.length).toBeCloseTo(0.3, 1);
    expect(some.filter((s) => s.kind === "bot" && s.returning)).toHaveLength(0);
    expect(some.map(({ returning: _, ...rest }) => rest)).toEqual(none.map(({ returning: _, ...rest }) => rest));
  });

  it("with a passkey on their phone: none by default, 10% at --passkey-share 0.1, no bot, and every other choice the same", () => {
    const none = traffic("baseline", ["--people", "4000"]).sessions;
    const some = traffic("baseline", ["--people", "4000", "--passkey-share", "0.1"]).sessions;
    expect(none.filter((s) => s.passkeyHolder)).toHaveLength(0);
    const real = some.filter((s) => s.kind === "real");
    expect(real.filter((s) => s.passkeyHolder).length / real.length).toBeCloseTo(0.1, 1);
    expect(some.filter((s) => s.kind === "bot" && s.passkeyHolder)).toHaveLength(0);
    expect(some.map(({ passkeyHolder: _, ...rest }) => rest)).toEqual(
      none.map(({ passkeyHolder: _, ...rest }) => rest),
    );
  });
});

describe("the passkey holders' authenticator (capacity/lib/abuse-passkeys.mjs)", () => {
  it("makes a registration and assertions that the service's WebAuthn library verifies, user verified; another challenge or origin fails", async () => {
    const { verifyAuthenticationResponse, verifyRegistrationResponse } = await import("@simplewebauthn/server");
    const { isoBase64URL } = await import("@simplewebauthn/server/helpers");
    const { assertion, makePasskey } = await import("../../capacity/lib/abuse-passkeys.mjs");
    const origin = "http://127.0.0.1:8787";
    const options = {
      challenge: "Y2hhbGxlbmdlLW9mLXRoZS10aWNrZXQ",
      rp: { id: "127.0.0.1" },
      user: { id: "dXNlci1oYW5kbGU" },
    };
    const made = makePasskey(options, origin);
    const reg = await verifyRegistrationResponse({
      response: JSON.parse(made.credential),
      expectedChallenge: options.challenge,
      expectedOrigin: origin,
      expectedRPID: "127.0.0.1",
      requireUserVerification: true,
    });
    expect(reg.verified).toBe(true);
    const credential = reg.registrationInfo!.credential;
    const tx = "the-first-page's-signed-tx";
    const challenge = isoBase64URL.fromBuffer(
      new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(tx))),
    );
    const check = (a: string, expectedChallenge: string, expectedOrigin = origin) =>
      verifyAuthenticationResponse({
        response: JSON.parse(a),
        expectedChallenge,
        expectedOrigin,
        expectedRPID: "127.0.0.1",
        credential,
        requireUserVerification: true,
      }).then(
        (r) => r.verified,
        () => false,
      );
    const a = assertion(made.passkey, tx, origin);
    expect(JSON.parse(a).response.userHandle).toBe(options.user.id);
    expect(await check(a, challenge)).toBe(true);
    expect(await check(assertion(made.passkey, "another tx", origin), challenge)).toBe(false);
    expect(await check(a, challenge, "http://localhost:8787")).toBe(false);
  });
});

describe("a profile's row", () => {
  type O = Parameters<typeof phaseFigures>[0][number];
  const outcome = (o: Partial<O>): O => ({
    kind: "real",
    app: 0,
    inBotBlock: false,
    solves: true,
    holdsNumber: true,
    typesCode: true,
    device: "phone",
    result: "completed",
    challenged: 0,
    tokens: 0,
    textsAsked: 0,
    texted: 0,
    sends: 1,
    sentAt: [0],
    refusals: [],
    retried: false,
    reason: null,
    ...o,
  });

  it("reads the figures under the issue's names from the two phases", () => {
    const bots = (sent: number) =>
      Array.from({ length: 100 }, (_, i) =>
        outcome({
          kind: "bot",
          holdsNumber: false,
          inBotBlock: true,
          result: i < sent ? "sent" : "abandoned",
          sends: i < sent ? 1 : 0,
          sentAt: i < sent ? [i * 1000] : [],
        }),
      );
    const off = phaseFigures(
      [
        ...bots(100),
        ...Array.from({ length: 10 }, () => outcome({})),
        ...Array.from({ length: 10 }, () => outcome({ app: 1 })),
        ...Array.from({ length: 10 }, () => outcome({ inBotBlock: true })),
      ],
      { attackSms: 100, simSms: 0, realSms: 30 },
    );
    const on = phaseFigures(
      [
        ...bots(4),
        ...Array.from({ length: 9 }, () => outcome({ textsAsked: 1, texted: 1, sends: 0, sentAt: [] })),
        outcome({ textsAsked: 1, result: "abandoned", sends: 0, sentAt: [] }),
        ...Array.from({ length: 10 }, () => outcome({ app: 1 })),
        ...Array.from({ length: 10 }, () =>
          outcome({ inBotBlock: true, refusals: [429], result: "refused", sends: 0, sentAt: [] }),
        ),
      ],
      { attackSms: 4, simSms: 0, realSms: 10 },
    );
    const row = profileRow("baseline", off, on, { appBudget: 1000, apps: 2, botApps: "one", botBlocks: 20, sims: 0 });
    expect(Object.keys(row)).toEqual(
      expect.arrayContaining([
        "name",
        "attackSmsShare",
        "attackFirstMinute",
        "peopleWaited",
        "successRatio",
        "attackedAppSuccessRatio",
        "atRiskSuccessRatio",
        "unattackedChallengedShare",
        "attackBudgetShare",
        "appsPaused",
        "attackWon",
        "attackWonOff",
      ]),
    );
    expect(row.attackSmsShare).toBe(0.04);
    expect(row.attackFirstMinute).toBe(4);
    expect(row.peopleWaited).toBe(10);
    expect(row.successRatio).toBeCloseTo(19 / 30);
    expect(row.attackedAppSuccessRatio).toBeCloseTo(9 / 20);
    expect(row.atRiskSuccessRatio).toBe(0);
    expect(row.unattackedChallengedShare).toBe(0);
    expect(row.attackBudgetShare).toBe(0.004);
    expect(row.appsPaused).toBe(0);
    expect(row.attackWon).toBe(4 * 30);
    expect(row.attackWonOff).toBe(100 * 30);
    expect(row.goals.find((g) => g.name === "peopleWaited")?.met).toBe(false);
    expect(row.goals.find((g) => g.name === "attackSmsShare")?.met).toBe(true);
  });
});
