// The passkeys of a directory shard (workers/provider/store/directory/tables/passkeys.ts) against a
// model, under random sequences of enrolments (SMS- or passkey-proven, pending or usable), sign-ins
// (challenges reused, counters that stand still or grow) and removals: every answer is the model's,
// so a challenge is taken once across both, a person never holds more than 10, an SMS proof
// never adds beside an active passkey, a pending one never signs in, and a counter only grows.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { env } from "../../../support/env";
import { ciOf, importRows } from "../../../support/directory";
import { subscriberByPhone } from "../../../../workers/provider/store/directory/directory";
import {
  addPasskey,
  passkeyHandleFor,
  passkeysOf,
  usePasskey,
  removePasskey,
} from "../../../../workers/provider/store/directory/passkeys";

type Op =
  | { k: "add"; proof: "sms" | "passkey"; pending: boolean; challenge: number; provenWith: number }
  | { k: "use"; cred: number; challenge: number; counter: number }
  | { k: "remove"; cred: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    k: fc.constant("add" as const),
    proof: fc.constantFrom("sms" as const, "passkey" as const),
    pending: fc.boolean(),
    challenge: fc.nat(8),
    provenWith: fc.nat(12),
  }),
  fc.record({ k: fc.constant("use" as const), cred: fc.nat(12), challenge: fc.nat(8), counter: fc.nat(4) }),
  fc.record({ k: fc.constant("remove" as const), cred: fc.nat(12) }),
);

/** "at most 10 passkeys a person" (the figure, not the code's constant). */
const MAX = 10;

let people = 0;

describe("a directory shard's passkeys", () => {
  it("answer as the model does under random enrolments, sign-ins and removals", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 40 }), async (ops) => {
        const n = people++;
        const phone = `010660${String(n).padStart(5, "0")}`;
        await importRows([
          {
            telcoCd: "K",
            phoneNo: phone,
            name: "모델",
            gender: "F",
            birth: "1990-01-01",
            foreign: "L",
            ci: ciOf(n % 250) + "",
          },
        ]);
        const id = (await subscriberByPhone(env, phone))!.id;
        expect(await passkeyHandleFor(env, id)).toBeTruthy();
        // the model
        const taken = new Set<string>();
        const creds: { id: string; usable: boolean; counter: number }[] = [];
        let made = 0;
        const run = `${n}-${Date.now()}`;
        for (const o of ops) {
          if (o.k === "add") {
            const challenge = `c${run}-${o.challenge}`;
            const provenWith =
              o.proof === "passkey" ? (creds[o.provenWith % Math.max(1, creds.length)]?.id ?? "none") : undefined;
            const credentialId = `k${run}-${made++}`;
            const got = await addPasskey(
              env,
              {
                subscriberId: id,
                credentialId,
                publicKey: new Uint8Array([1, 2, 3]),
                counter: 0,
                transports: [],
                name: "m",
                device: "device",
                riskWindowMs: 259_200_000,
                madeWith: o.proof,
                usableAt: o.pending ? Date.now() + 3_600_000 : Date.now() - 1,
                challenge,
                challengeUntil: Date.now() + 60_000,
                provenWith,
              },
              "ko",
            );
            const active = creds.filter((c) => c.usable);
            const want = taken.has(challenge)
              ? { ok: false, reason: "replayed" }
              : provenWith !== undefined && !active.some((c) => c.id === provenWith)
                ? { ok: false, reason: "proof_inactive" }
                : provenWith === undefined && active.length > 0
                  ? { ok: false, reason: "needs_passkey" }
                  : creds.length >= MAX
                    ? { ok: false, reason: "full" }
                    : { ok: true };
            taken.add(challenge);
            expect(got, JSON.stringify(o)).toEqual(want);
            if (want.ok) creds.push({ id: credentialId, usable: !o.pending, counter: 0 });
          } else if (o.k === "use") {
            const c = creds[o.cred % Math.max(1, creds.length)];
            const credentialId = c?.id ?? `none-${run}`;
            const challenge = `c${run}-${o.challenge}`;
            const got = await usePasskey(env, id, credentialId, challenge, Date.now() + 60_000, o.counter);
            let want: unknown;
            if (!c) want = { ok: false, reason: "unknown" };
            else {
              const fresh = !taken.has(challenge);
              taken.add(challenge);
              want = !fresh
                ? { ok: false, reason: "replayed" }
                : !c.usable
                  ? { ok: false, reason: "pending" }
                  : (o.counter !== 0 || c.counter !== 0) && o.counter <= c.counter
                    ? { ok: false, reason: "counter" }
                    : { ok: true, counter: o.counter };
              if ((want as { ok: boolean }).ok) c.counter = o.counter;
            }
            // a sign-in's answer carries its person (and no link: none was asked for)
            const { person, link, subscriberId, ...rest } = got as typeof got & {
              person?: { id: number } | null;
              subscriberId?: number;
            };
            expect(rest, JSON.stringify(o)).toEqual(want);
            if (got.ok) expect([subscriberId, person?.id, link]).toEqual([id, id, null]);
          } else {
            const i = o.cred % Math.max(1, creds.length);
            const c = creds[i];
            expect(await removePasskey(env, id, c?.id ?? `none-${run}`)).toBe(c !== undefined);
            if (c) creds.splice(i, 1);
          }
          const stored = await passkeysOf(env, id);
          expect(stored.length).toBeLessThanOrEqual(MAX);
          expect(stored.map((k) => k.credentialId).sort()).toEqual(creds.map((c) => c.id).sort());
        }
      }),
      { numRuns: 25 },
    );
  });
});
