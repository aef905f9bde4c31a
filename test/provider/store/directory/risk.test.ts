// The carrier's risk signals in a person's home shard (store/directory/risk.ts, tables/people.ts
// `noteSims`), against a model written from the rules: what is stored is what was last sent (an
// absent field keeps the stored one; a new change time without a kind is the person's), the risk
// starts at the latest person-kind SIM change or port, and an event is queued exactly when a write
// moves that start later while the window is still open: once per change, never for the same
// values again, a carrier-kind change or one older than the window.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runInDurableObject } from "cloudflare:test";
import { env } from "../../../support/env";
import { ciOf, importRows } from "../../../support/directory";
import { dirAt } from "../../../../workers/provider/store/directory/directory-shard";
import { homeOfId } from "../../../../workers/provider/store/directory/keys";
import { subscriberByPhone } from "../../../../workers/provider/store/directory/directory";
import type { SimSignal } from "../../../../workers/provider/store/directory/risk";

const HOUR = 3600_000;
/** The default window the issue names: 72 hours. */
const WINDOW_MS = 259_200 * 1000;

type Model = { sim: number | null; kind: "person" | "carrier" | null; port: number | null };

function modelRisk(m: Model): number | null {
  const sim = m.sim !== null && m.kind !== "carrier" ? m.sim : null;
  if (sim === null) return m.port;
  return m.port === null ? sim : Math.max(sim, m.port);
}

function modelApply(m: Model, s: SimSignal): Model {
  const newTime = s.simChangedAt !== undefined && s.simChangedAt !== m.sim;
  return {
    sim: s.simChangedAt ?? m.sim,
    kind: s.simChangeKind ?? (newTime ? null : m.kind),
    port: s.portedAt ?? m.port,
  };
}

/** Signals as a carrier sends them: times on a few hours' grid (repeats are likely), some older than the window. */
const signal = fc
  .record(
    {
      simChangedAt: fc.integer({ min: 0, max: 12 }),
      simChangeKind: fc.constantFrom("person" as const, "carrier" as const),
      portedAt: fc.integer({ min: 0, max: 12 }),
    },
    { requiredKeys: [] },
  )
  .map((r) => ({ ...r, simChangeKind: r.simChangedAt === undefined ? undefined : r.simChangeKind }));

let next = 0;

describe("risk signals in the shard (model-checked)", () => {
  it("stores what was sent and queues one event per change that opens a newer window", async () => {
    const base = Date.now();
    // hour steps back from now: 0..12 × 8 h covers inside and outside the 72-hour window
    const at = (k: number | undefined) => (k === undefined ? undefined : base - k * 8 * HOUR);
    await fc.assert(
      fc.asyncProperty(fc.array(signal, { minLength: 1, maxLength: 8 }), async (ops) => {
        const i = next++;
        const phone = `0107800${String(1000 + i).padStart(4, "0")}`;
        const ci = ciOf(900 + i);
        await importRows([
          { telcoCd: "S", phoneNo: phone, name: `모델${i}`, gender: "M", birth: "1980-01-01", foreign: "L", ci },
        ]);
        const id = (await subscriberByPhone(env, phone))!.id;
        const shard = dirAt(env, homeOfId(id));
        let m: Model = { sim: null, kind: null, port: null };
        let events = 0;
        let queued = 0;
        for (const op of ops) {
          const sim: SimSignal = {};
          if (op.simChangedAt !== undefined) sim.simChangedAt = at(op.simChangedAt);
          if (op.simChangeKind !== undefined) sim.simChangeKind = op.simChangeKind;
          if (op.portedAt !== undefined) sim.portedAt = at(op.portedAt);
          const before = modelRisk(m);
          const next = modelApply(m, sim);
          const after = modelRisk(next);
          const changed = next.sim !== m.sim || next.kind !== m.kind || next.port !== m.port;
          if (changed && after !== null && (before === null || after > before) && Date.now() < after + WINDOW_MS)
            events++;
          m = next;
          const { results, jobs } = await shard.noteSims([{ id, ci, sim }], WINDOW_MS);
          expect(results).toEqual(
            Object.keys(sim).length ? [{ id, changed, riskFrom: after }] : [{ id, changed: false, riskFrom: after }],
          );
          queued += jobs.length;
          for (const j of jobs) expect(j.job).toEqual({ kind: "credential_change", id, at: after });
        }
        expect(queued).toBe(events);
        const row = (await shard.subscriber(id))!;
        expect({ sim: row.sim_changed_at, kind: row.sim_change_kind, port: row.ported_at }).toEqual(m);
        // another person's ci at this id (the number passed on meanwhile) writes nothing
        const other = await shard.noteSims([{ id, ci: ciOf(5), sim: { portedAt: base } }], WINDOW_MS);
        expect(other).toEqual({ results: [], jobs: [] });
        await runInDurableObject(shard, (_o, st) => {
          st.storage.sql.exec("DELETE FROM jobs");
        });
      }),
      { numRuns: 40 },
    );
  });
});
