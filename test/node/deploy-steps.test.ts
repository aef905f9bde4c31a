// The deploy steps of the docs, read against wrangler.toml: every worker of the service is deployed
// by docs/operations.md's first deploy (the `single` worker by its own section; the kit's route
// workers by docs/rp-kit.md), and every secret a worker requires is put on that worker there. The
// shell the docs show is expanded as a shell would (`for w in a b; do … $w …; done`).
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { envNames } from "../../scripts/build.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const read = (p: string) => readFileSync(join(root, p), "utf8");

/** The secrets each env of wrangler.toml requires (`secrets = { required = [...] }` in its table). */
export function requiredSecrets(toml: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let env: string | null = null;
  for (const line of toml.split("\n")) {
    const head = /^\[env\.([A-Za-z0-9_-]+)\]/.exec(line);
    if (head) env = head[1]!;
    else if (/^\[[^\]]*\]/.test(line) && !/^\[\[?env\./.test(line)) env = null;
    const req = /^secrets\s*=\s*\{\s*required\s*=\s*\[([^\]]*)\]/.exec(line);
    if (req && env)
      out.set(
        env,
        [...req[1]!.matchAll(/"([^"]+)"/g)].map((m) => m[1]!),
      );
  }
  return out;
}

/** The commands of a document's shell lines, each `for v in …; do …; done` expanded. */
export function commands(doc: string): string[] {
  const out: string[] = [];
  for (const raw of doc.split("\n")) {
    const line = raw.replace(/\s#\s.*$/, "");
    const loop = /for (\w+) in ([^;]+); do (.+?); done/.exec(line);
    if (loop) {
      for (const v of loop[2]!.trim().split(/\s+/)) out.push(loop[3]!.replaceAll(`$${loop[1]}`, v));
    } else {
      const cmd = /(?:npx )?wrangler (?:deploy|secret put)[^`]*/.exec(line);
      if (cmd) out.push(cmd[0].trim());
    }
  }
  return out;
}

/** What the commands deploy, and which secret they put on which env. */
function plan(cmds: string[]): { deployed: Set<string>; secrets: Set<string> } {
  const deployed = new Set<string>();
  const secrets = new Set<string>();
  for (const c of cmds) {
    const env = /--env\s+([A-Za-z0-9_-]+)/.exec(c)?.[1];
    if (!env) continue;
    if (/wrangler deploy\b/.test(c) && !/--dry-run/.test(c)) deployed.add(env);
    const put = /wrangler secret put\s+([A-Z0-9_]+)/.exec(c);
    if (put) secrets.add(`${env} ${put[1]}`);
  }
  return { deployed, secrets };
}

/** The first deploy of docs/operations.md (its numbered steps), and its all-in-one section. */
function section(doc: string, heading: string): string {
  const start = doc.indexOf(`\n## ${heading}`);
  expect(start, heading).toBeGreaterThan(0);
  const end = doc.indexOf("\n## ", start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

const toml = read("wrangler.toml");
const envs: string[] = envNames(toml);
const required = requiredSecrets(toml);
const operations = read("docs/operations.md");
const service = envs.filter((e) => e !== "single" && !e.startsWith("rp-"));
const sources: [string, string[], string][] = [
  ["docs/operations.md, First deploy", service, section(operations, "First deploy, step by step")],
  ["docs/operations.md, All-in-one", ["single"], section(operations, "All-in-one worker for small installs")],
  ["docs/rp-kit.md", envs.filter((e) => e.startsWith("rp-")), read("docs/rp-kit.md")],
];

describe("the deploy steps deploy every worker of wrangler.toml and put every secret it requires", () => {
  it("reads the envs, their secrets and the docs' commands (the check is not vacuous)", () => {
    expect(service).toEqual(
      expect.arrayContaining(["authorize", "token", "user-me", "disconnect", "admin", "console"]),
    );
    expect(required.get("token")).toEqual(["SEAL_KEY"]);
    expect(commands("   for w in a b; do npx wrangler deploy --env $w; done\n")).toEqual([
      "npx wrangler deploy --env a",
      "npx wrangler deploy --env b",
    ]);
  });

  /** The workers a document leaves undeployed, and the secrets it leaves unset. */
  function gaps(list: string[], doc: string): { undeployed: string[]; unset: string[] } {
    const { deployed, secrets } = plan(commands(doc));
    return {
      undeployed: list.filter((e) => !deployed.has(e)),
      unset: list.flatMap((e) => (required.get(e) ?? []).map((s) => `${e} ${s}`)).filter((s) => !secrets.has(s)),
    };
  }

  for (const [where, list, doc] of sources)
    it(`${where}: deploys ${list.join(", ")}, each with its secrets`, () => {
      expect(gaps(list, doc)).toEqual({ undeployed: [], unset: [] });
    });

  it("finds a planted omission: a worker left out of the deploy, and a secret left unset", () => {
    const doc = section(operations, "First deploy, step by step")
      .replace("disconnect admin console; do npx wrangler deploy", "disconnect admin; do npx wrangler deploy")
      .replace("secret put TURNSTILE_SECRET_KEY --env authorize", "secret list --env authorize");
    expect(gaps(service, doc)).toEqual({ undeployed: ["console"], unset: ["authorize TURNSTILE_SECRET_KEY"] });
  });
});
