// The admin CLI run in process against a stand-in service (the CLI's tests of what it sends and
// shows; the service's side has its own tests under test/admin/).
import { main } from "../../scripts/admin.mjs";

export interface Captured {
  method: string;
  path: string;
  body: unknown;
}

/** Runs the CLI with a stand-in service that answers every call with `answer` (a client). */
export async function run(argv: string[], answer: Record<string, unknown>) {
  const calls: Captured[] = [];
  let out = "";
  let err = "";
  const code = await main(argv, {
    env: { ADMIN_TOKEN: "t", BASE_URL: "https://login.example.com" },
    out: { write: (s: string) => ((out += s), true) },
    err: { write: (s: string) => ((err += s), true) },
    fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = new Request(input, init);
      calls.push({
        method: req.method,
        path: new URL(req.url).pathname,
        body: req.method === "GET" ? undefined : await req.json(),
      });
      return Response.json(answer, { status: req.method === "POST" ? 201 : 200 });
    },
  } as never);
  return { code, out, err, calls };
}
