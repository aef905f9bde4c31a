// Failover across SMS gateways (docs/signin.md "Failover"): the configured gateways in order, one
// attempt each under its timeout, a circuit per gateway. A gateway that times out, answers 5xx or
// 429, or refuses as its own fault hands the send to the next one; a refusal that is the request's
// fault (an invalid number) ends the send. The first gateway that accepts ends it too, so at most
// one gateway accepts a send unless one accepted after its timeout (docs/security.md).

import { SmsFailure, type SmsFault, type SmsGatewayName, type SmsMessage, type SmsSender } from "./sender";

export interface Gateway {
  name: SmsGatewayName;
  /** Its circuit: the gateway and the account it sends from. */
  circuit: string;
  timeoutMs: number;
  sender: SmsSender;
}

/** How one attempt ended: delivered, a fault, or skipped because the gateway's circuit is open. */
export type SmsAttemptResult = "delivered" | SmsFault | "circuit_open";

/** One attempt, as audited: never the number, the text or the code. */
export interface SmsAttempt {
  /** The gateway, or the dev `outbox` (whose sends are counted as codes sent, at no cost). */
  gateway: SmsGatewayName | "outbox";
  result: SmsAttemptResult;
  /** Milliseconds from the request to the answer (0 when skipped). */
  ms: number;
  /** The provider's HTTP status and result code, when it answered. */
  status?: number;
  code?: string;
}

/** Consecutive failures that open a gateway's circuit, and how long it then stays open. */
export const CIRCUIT_FAILURES = 5;
export const CIRCUIT_OPEN_MS = 30_000;

/**
 * Per-gateway circuits, kept per isolate: `CIRCUIT_FAILURES` failures in a row (timeouts, 5xx,
 * 429, the provider's refusals) skip the gateway for `CIRCUIT_OPEN_MS`; then sends try it again,
 * and one more failure opens it again. An acceptance, or a refusal that is the request's fault
 * (the gateway answered sensibly), closes it.
 */
export class Circuits {
  private readonly failures = new Map<string, { count: number; openUntil: number }>();

  isOpen(key: string, now: number): boolean {
    const f = this.failures.get(key);
    return f !== undefined && f.count >= CIRCUIT_FAILURES && now < f.openUntil;
  }

  healthy(key: string): void {
    this.failures.delete(key);
  }

  failed(key: string, now: number): void {
    const f = this.failures.get(key) ?? { count: 0, openUntil: 0 };
    f.count += 1;
    if (f.count >= CIRCUIT_FAILURES) f.openUntil = now + CIRCUIT_OPEN_MS;
    this.failures.set(key, f);
  }

  /** Forgets every circuit (tests). */
  reset(): void {
    this.failures.clear();
  }
}

/** The isolate's circuits. */
export const smsCircuits = new Circuits();

/** One attempt under its timeout: the request is aborted when the time is up. */
async function attempt(g: Gateway, m: SmsMessage): Promise<void> {
  const ac = new AbortController();
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new SmsFailure("timeout"));
      ac.abort();
    }, g.timeoutMs);
  });
  try {
    await Promise.race([g.sender.send(m, { signal: ac.signal }), deadline]);
  } catch (err) {
    if (timedOut) throw new SmsFailure("timeout");
    throw err instanceof SmsFailure ? err : new SmsFailure("network_error");
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
}

export interface FailoverOptions {
  circuits?: Circuits;
  /** Called after every attempt and every skip, in order (the audit trail). */
  onAttempt?: (a: SmsAttempt) => void;
}

/**
 * Sends through the first gateway that accepts, in order; throws the last failure when none does
 * (or the request's fault at once, without trying further).
 */
export function failoverSender(gateways: readonly Gateway[], opts: FailoverOptions = {}): SmsSender {
  const circuits = opts.circuits ?? smsCircuits;
  const report = opts.onAttempt ?? (() => {});
  return {
    async send(m) {
      let last = new SmsFailure("provider_refused");
      for (const g of gateways) {
        if (circuits.isOpen(g.circuit, Date.now())) {
          report({ gateway: g.name, result: "circuit_open", ms: 0 });
          continue;
        }
        const started = Date.now();
        try {
          await attempt(g, m);
        } catch (err) {
          const f = err as SmsFailure;
          report({ gateway: g.name, result: f.fault, ms: Date.now() - started, status: f.status, code: f.code });
          if (f.fault === "request_refused") {
            circuits.healthy(g.circuit);
            throw f;
          }
          circuits.failed(g.circuit, Date.now());
          last = f;
          continue;
        }
        circuits.healthy(g.circuit);
        report({ gateway: g.name, result: "delivered", ms: Date.now() - started });
        return;
      }
      throw last;
    },
  };
}
