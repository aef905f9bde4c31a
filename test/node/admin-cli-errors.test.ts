// How the admin CLI (scripts/admin.mjs) reports a refusal: the service's JSON message, or, for an
// answer that is not the service's JSON (a proxy's or the runtime's plain text), that text's own
// words on one line, cut short; an HTML page or an empty body is said to be one. The status follows
// once, in parentheses.
import { describe, expect, it } from "vitest";
import { main, plainWords } from "../../scripts/admin.mjs";

async function answeredWith(res: () => Response): Promise<{ code: number; err: string }> {
  let err = "";
  const code = await main(["clients", "list"], {
    env: { ADMIN_TOKEN: "t", BASE_URL: "https://login.example.com" },
    out: { write: () => true },
    err: { write: (s: string) => ((err += s), true) },
    fetch: async () => res(),
  } as never);
  // the CLI names a remote service first ("service: …"); the error is the line after
  return {
    code,
    err: err
      .split("\n")
      .filter((l) => l.startsWith("error: "))
      .join("\n"),
  };
}

describe("admin CLI error answers", () => {
  it("plain text: its words, then the status once", async () => {
    const r = await answeredWith(
      () =>
        new Response(
          "Your worker restarted mid-request. Please try sending the request again. Only GET or HEAD requests are retried automatically.",
          { status: 503 },
        ),
    );
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      "error: Your worker restarted mid-request. Please try sending the request again. Only GET or HEAD requests are retried automatically. (HTTP 503)",
    );
  });

  it("the service's JSON: its message; HTML or nothing: said so, with the status", async () => {
    const json = await answeredWith(() =>
      Response.json({ error: "invalid_request", message: "name is required." }, { status: 400 }),
    );
    expect(json.err).toBe("error: name is required. (HTTP 400)");
    const html = await answeredWith(
      () => new Response("<!DOCTYPE html><html><body>Bad gateway</body></html>", { status: 502 }),
    );
    expect(html.err).toBe("error: an answer that is not the service's JSON (HTTP 502)");
    const empty = await answeredWith(() => new Response(null, { status: 500 }));
    expect(empty.err).toBe("error: an empty answer (HTTP 500)");
  });

  it("one line, at most 160 characters", () => {
    expect(plainWords("  upstream\r\n  timed out \n")).toBe("upstream timed out");
    const long = plainWords("x".repeat(500));
    expect(long).toHaveLength(160);
    expect(long.endsWith("…")).toBe(true);
    expect(plainWords("x".repeat(160))).toBe("x".repeat(160));
  });
});
