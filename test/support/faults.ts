// Faults on real bindings: the real namespace, with one call refused, as a dead object or a worker
// killed at that point would leave it (the change journal's tests, test/admin/change-journal.test.ts).
import { env } from "./env";

/** The real ONE_TIME namespace, but every object refuses audit appends: a change's last step fails. */
export function auditRefused(): typeof env.ONE_TIME {
  return new Proxy(env.ONE_TIME, {
    get(t, prop) {
      if (prop !== "get") {
        const v = Reflect.get(t, prop, t) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
      }
      return (id: DurableObjectId) => {
        const stub = t.get(id) as unknown as Record<string, (...a: unknown[]) => unknown>;
        return new Proxy(stub, {
          get: (s, p) =>
            p === "appendAudit"
              ? () => Promise.reject(new Error("object unreachable"))
              : typeof p === "string"
                ? (...a: unknown[]) => s[p]!(...a)
                : undefined,
        });
      };
    },
  });
}
