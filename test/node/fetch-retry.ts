// A fetch for the node tests that sends a lost GET again. wrangler dev's proxy, in front of every
// test server, can lose a request on its own hop to the worker (an open workers-sdk bug: kj's 5 s
// keep-alive timers on that hop, docs/architecture.md §7): the request then never answers, or
// fails. A GET or HEAD to a loopback server, with no signal of its own, is given `attemptMs` an
// attempt and sent again after such a loss, up to `attempts` in all, saying so on stderr. The
// tests' GETs read and poll (the dev outbox, the admin API's lists, pages), so sending one again
// changes nothing; an answer, whatever its status, is the answer. Anything else (a POST: the
// worker may have acted on it) goes once, as fetch sends it.

type Fetch = typeof fetch;

function retriable(input: Parameters<Fetch>[0], init?: RequestInit): boolean {
  if (input instanceof Request || init?.signal) return false;
  const method = (init?.method ?? "GET").toUpperCase();
  if (method !== "GET" && method !== "HEAD") return false;
  const host = new URL(String(input)).hostname;
  return host === "localhost" || host === "127.0.0.1" || host === "[::1]";
}

export function retryingFetch(send: Fetch, attemptMs: number, attempts: number): Fetch {
  return async (input, init) => {
    if (!retriable(input, init)) return send(input, init);
    for (let attempt = 1; ; attempt++) {
      try {
        return await send(input, { ...init, signal: AbortSignal.timeout(attemptMs) });
      } catch (e) {
        if (attempt >= attempts) throw e;
        console.error(`(test fetch) ${init?.method ?? "GET"} ${String(input)} lost (${String(e)}); sending it again`);
      }
    }
  };
}
