// A fetch for the node tests that sends a lost GET again. wrangler dev's proxy, in front of every
// test server, can lose a request on its own hop to the worker (an open workers-sdk bug: kj's 5 s
// keep-alive timers on that hop, docs/testing.md): the request then never answers, or
// fails. A GET or HEAD to a loopback server, with no signal of its own, is given `attemptMs` an
// attempt and sent again after such a loss, up to `attempts` in all, saying so on stderr. The
// tests' GETs read and poll (the dev outbox, the admin API's lists, pages), so sending one again
// changes nothing; an answer, whatever its status, is the answer. Anything else (a POST: the
// worker may have acted on it) goes once, as fetch sends it.
//
// The loss happens on a connection of the proxy's pool idle about 5 s, and the pool hands out the
// connection used last first. So before a POST (anything not sent again) to a wrangler dev server
// (`proxied`) that this fetch has had no answer from for `idleMs`, it sends `GET /healthz` there,
// which may be sent again: the POST then rides the connection that GET has just used.

type Fetch = typeof fetch;

function retriable(input: Parameters<Fetch>[0], init?: RequestInit): boolean {
  if (input instanceof Request || init?.signal) return false;
  const method = (init?.method ?? "GET").toUpperCase();
  if (method !== "GET" && method !== "HEAD") return false;
  const host = new URL(String(input)).hostname;
  return host === "localhost" || host === "127.0.0.1" || host === "[::1]";
}

export function retryingFetch(
  send: Fetch,
  attemptMs: number,
  attempts: number,
  proxied: (origin: string) => boolean = () => false,
  idleMs = 3000,
): Fetch {
  /** When each origin last answered this fetch (ms). */
  const answered = new Map<string, number>();
  const originOf = (input: Parameters<Fetch>[0]): string | undefined => {
    try {
      return new URL(input instanceof Request ? input.url : String(input)).origin;
    } catch {
      return undefined; // fetch itself refuses it
    }
  };
  const self: Fetch = async (input, init) => {
    const origin = originOf(input);
    const done = <T>(p: Promise<T>): Promise<T> =>
      origin === undefined ? p : p.finally(() => answered.set(origin, Date.now()));
    if (!retriable(input, init)) {
      if (origin !== undefined && proxied(origin) && Date.now() - (answered.get(origin) ?? 0) > idleMs)
        await self(`${origin}/healthz`).then(
          (r) => r.body?.cancel(),
          () => undefined,
        );
      return done(send(input, init));
    }
    for (let attempt = 1; ; attempt++) {
      try {
        return await done(send(input, { ...init, signal: AbortSignal.timeout(attemptMs) }));
      } catch (e) {
        if (attempt >= attempts) throw e;
        console.error(`(test fetch) ${init?.method ?? "GET"} ${String(input)} lost (${String(e)}); sending it again`);
      }
    }
  };
  return self;
}
