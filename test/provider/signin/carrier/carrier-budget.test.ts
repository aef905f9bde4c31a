// The carrier's time budget says whose side was slow (docs/carrier-api.md "Faults"): a timer that
// fires on time with no answer is the carrier's `timeout`; one that fires late means the worker was
// busy (another request's work in the same isolate), and the answer, which may be waiting to be
// read, gets one more short wait; late again, the fault is the service's own, `service_busy`.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  askCarrier,
  carrierBudget,
  CarrierUnavailable,
  lateLimitMs,
  type CarrierClock,
} from "../../../../workers/provider/signin/carrier-api";

/** A clock the test moves: timers fire when `fire` is called, at the time the test sets. */
function manualClock() {
  let t = 1_000_000;
  const timers: { at: number; fn: () => void; live: boolean }[] = [];
  const clock: CarrierClock = {
    now: () => t,
    after(ms, fn) {
      const timer = { at: t + ms, fn, live: true };
      timers.push(timer);
      return () => void (timer.live = false);
    },
  };
  return {
    clock,
    /** Fires the next live timer `late` ms after its time (the clock reads that time then). */
    fire(late: number) {
      const next = timers.find((x) => x.live);
      if (!next) return false;
      next.live = false;
      t = next.at + late;
      next.fn();
      return true;
    },
  };
}

describe("the carrier's budget", () => {
  it("names the service's side exactly when its timers fire late twice, the carrier's when the last fires on time", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 100, max: 10_000 }),
        fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 2, maxLength: 2 }),
        (timeoutMs, lateness) => {
          const m = manualClock();
          const ctrl = new AbortController();
          const budget = carrierBudget(m.clock, timeoutMs, ctrl);
          const limit = lateLimitMs(timeoutMs);
          m.fire(lateness[0]!);
          if (lateness[0]! <= limit) {
            expect(budget.reason()).toBe("timeout");
            expect(ctrl.signal.aborted).toBe(true);
            return;
          }
          // late: not yet spent, the answer gets one more short wait
          expect(ctrl.signal.aborted).toBe(false);
          m.fire(lateness[1]!);
          expect(budget.reason()).toBe(lateness[1]! > limit ? "service_busy" : "timeout");
          expect(ctrl.signal.aborted).toBe(true);
        },
      ),
    );
  });

  it("an answer the carrier gave while the worker was busy is read, not refused as a timeout", async () => {
    const m = manualClock();
    let answer: (r: Response) => void = () => {};
    const fetcher = ((_u: RequestInfo | URL, init?: RequestInit) =>
      new Promise<Response>((resolve, reject) => {
        answer = resolve;
        init?.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
      })) as typeof fetch;
    const asked = askCarrier(
      { url: "https://carrier.test/verify", secret: "s".repeat(32), timeoutMs: 2_000, clock: m.clock, fetcher },
      { telco: "S", name: "홍길동", phone: "01012345678" },
    );
    await new Promise((r) => setTimeout(r, 0)); // the request is sent (after the signature)
    m.fire(1_500); // the budget's timer ran 1.5 s late: the worker was busy
    answer(new Response("{}", { status: 503 })); // the carrier's answer, read in the grace
    const err = await asked.catch((e: unknown) => e);
    // the answer was read: its own fault (a 503 status), not a timeout
    expect(err).toBeInstanceOf(CarrierUnavailable);
    expect((err as CarrierUnavailable).reason).toBe("status");
  });

  it("no answer while the worker stays busy is the service's fault, service_busy; on time, the carrier's timeout", async () => {
    for (const [late, reason] of [
      [[1_500, 1_500], "service_busy"],
      [[1_500, 0], "timeout"],
      [[0], "timeout"],
    ] as const) {
      const m = manualClock();
      const fetcher = ((_u: RequestInfo | URL, init?: RequestInit) =>
        new Promise<Response>((_r, reject) =>
          init?.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))),
        )) as typeof fetch;
      const asked = askCarrier(
        { url: "https://carrier.test/verify", secret: "s".repeat(32), timeoutMs: 2_000, clock: m.clock, fetcher },
        { telco: "S", name: "홍길동", phone: "01012345678" },
      );
      await new Promise((r) => setTimeout(r, 0));
      for (const l of late) m.fire(l);
      const err = await asked.catch((e: unknown) => e);
      expect((err as CarrierUnavailable).reason, JSON.stringify(late)).toBe(reason);
    }
  });
});
