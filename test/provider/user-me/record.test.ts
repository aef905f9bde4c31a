// The user record's JSON text (workers/provider/user-me/record.ts), for any items in any agreed
// order and any subscriber values: keys exactly plid, the items in order, then the two flags;
// plain items as they are, encrypted ones decrypting to the same values (spec §2.1, §2.2).

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decryptField } from "../../../workers/core/crypto";
import { ENCRYPTED_ITEMS, IDENTITY_ITEMS, type IdentityItem } from "../../../workers/core/spec";
import { itemValue, userRecordJson } from "../../../workers/provider/user-me/record";
import type { SubscriberSnapshot } from "../../../workers/provider/store/one-time/tables/codes";

const SECRET = "demoSecret0123456789abcdefABCDEF";
const text = fc.string({ unit: "grapheme", maxLength: 20 }); // quotes, backslashes, Hangul, emoji, controls (the types of gender, telco, … are wider here on purpose)

describe("user/me record JSON", () => {
  it("has exactly plid, the agreed items in order and the flags, each value what the item is", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray([...IDENTITY_ITEMS]),
        fc.record({ telco: text, phone: text, name: text, gender: text, foreign: text, ci: text }),
        fc.date({ min: new Date("1900-01-01"), max: new Date("2025-12-31"), noInvalidDate: true }),
        fc.boolean(),
        fc.constantFrom("Y", "N"),
        async (items, s, birthDate, full, flag) => {
          const subscriber = { ...s, birth: birthDate.toISOString().slice(0, 10) } as unknown as SubscriberSnapshot;
          const now = Date.now();
          const json = await userRecordJson({
            plid: `p"\\${s.name}`,
            items: items as IdentityItem[],
            subscriber: full ? subscriber : null,
            autoLoginYn: flag,
            autoStatusCheck: "N",
            secret: SECRET,
            now,
          });
          const user = JSON.parse(json) as Record<string, string>;
          expect(Object.keys(user)).toEqual(["plid", ...items, "autoLoginYn", "autoStatusCheck"]);
          expect(user.plid).toBe(`p"\\${s.name}`);
          expect([user.autoLoginYn, user.autoStatusCheck]).toEqual([flag, "N"]);
          for (const item of items as IdentityItem[]) {
            const want = full ? itemValue(item, subscriber, now) : "";
            const got = ENCRYPTED_ITEMS.has(item) ? await decryptField(SECRET, user[item]!) : user[item];
            expect(got, item).toBe(want);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
