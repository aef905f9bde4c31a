// The layout's rules (docs/architecture.md), checked by reading every import of workers/ and of the
// kit package (packages/kit/src, named `package/` below): core/ imports nothing of the project
// outside core/ and the package's core, and stays small; the package imports nothing outside itself
// and no module but jose (JWS) and hono (its Hono adapter), so it installs with jose alone; the kit's route workers use the
// package only; the provider never imports the kit, the admin API or the all-in-one worker; the
// admin API may use the provider's store only.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { circles, edges, files, graphOf, lineCount } from "./import-graph";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const workers = join(root, "workers");
const kitPackage = join(root, "packages", "kit", "src");

/** A path relative to workers/, the package's files as `package/...` (`package/core/http.js`). */
function named(p: string): string {
  const inPackage = relative(kitPackage, p);
  return inPackage.startsWith("..") ? relative(workers, p) : `package/${inPackage.replace(/\.js$/, "")}`;
}

/** Each file's project imports (`kit/login/index.ts` → `package/routes/login`); `bare` for modules. */
function imports(): { file: string; target: string }[] {
  const out: { file: string; target: string }[] = [];
  for (const f of [...files(workers), ...files(kitPackage)]) {
    const text = readFileSync(f, "utf8");
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?from\s+"([^"]+)"/g)) {
      const spec = m[1]!;
      const target = spec.startsWith(".") ? named(resolve(dirname(f), spec)) : `bare:${spec}`;
      out.push({ file: named(f), target });
    }
  }
  return out;
}

const top = (p: string) => p.split("/")[0]!;

describe("the layout's import rules", () => {
  const all = imports();

  it("reads the imports it checks (the rules below are not vacuous)", () => {
    expect(all.length).toBeGreaterThan(100);
    expect(all.some((i) => top(i.file) === "kit" && top(i.target) === "package")).toBe(true);
    expect(all.some((i) => i.file.startsWith("package/") && i.target.startsWith("package/core/"))).toBe(true);
  });

  it("core/ knows no route, store or domain: it imports only core/ and the package's core", () => {
    const bad = all.filter(
      (i) =>
        (top(i.file) === "core" && !(top(i.target) === "core" || i.target.startsWith("package/core/"))) ||
        (i.file.startsWith("package/core/") && !i.target.startsWith("package/core/")),
    );
    // the two libraries the core is built on: itty-router (its route tables) and jose (JWS)
    const library = (i: { file: string; target: string }) =>
      (i.target === "bare:itty-router" && i.file === "core/router.ts") ||
      (i.target === "bare:jose" && i.file === "package/core/jws.ts");
    expect(bad.filter((i) => !library(i))).toEqual([]);
  });

  it("the package imports only itself, the Workers runtime's own module, jose only for JWS, and hono only in its Hono adapter (it installs with jose alone)", () => {
    const bad = all.filter(
      (i) =>
        top(i.file) === "package" &&
        top(i.target) !== "package" &&
        // the kit's Durable Object store extends the runtime's class: a module of workerd, not of npm
        !(i.file === "package/login-store.ts" && i.target === "bare:cloudflare:workers") &&
        !(i.file === "package/hono.ts" && i.target === "bare:hono") &&
        // signed events' JWS (RFC 7515) is jose's, never the kit's own
        !(i.file === "package/core/jws.ts" && i.target === "bare:jose"),
    );
    expect(bad).toEqual([]);
    // and the package says so: jose is its one dependency, hono an optional peer
    const pkg = JSON.parse(readFileSync(join(root, "packages", "kit", "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    expect(Object.keys(pkg.dependencies ?? {})).toEqual(["jose"]);
  });

  it("the kit's route workers use the package only, never the provider (it must work against the reference service)", () => {
    expect(all.filter((i) => top(i.file) === "kit" && !["kit", "package"].includes(top(i.target)))).toEqual([]);
  });

  it("the provider never imports the kit, the admin API or the all-in-one worker", () => {
    expect(
      all.filter(
        (i) =>
          top(i.file) === "provider" && !["provider", "core"].includes(top(i.target)) && !i.target.startsWith("bare:"),
      ),
    ).toEqual([]);
  });

  it("the admin API uses core/ and the provider's store only", () => {
    const bad = all.filter(
      (i) =>
        top(i.file) === "admin" &&
        !["admin", "core"].includes(top(i.target)) &&
        !i.target.startsWith("bare:") &&
        !i.target.startsWith("provider/store/"),
    );
    expect(bad).toEqual([]);
  });

  it("the console uses core/, the admin API, the provider's store, the sign-in and the consoles' frame only; only the consoles' worker and the all-in-one worker import it", () => {
    const bad = all.filter(
      (i) =>
        top(i.file) === "console" &&
        !["console", "core", "admin", "frame"].includes(top(i.target)) &&
        !i.target.startsWith("bare:") &&
        !i.target.startsWith("provider/store/") &&
        !i.target.startsWith("provider/signin/") &&
        i.target !== "provider/config",
    );
    expect(bad).toEqual([]);
    expect(
      all.filter((i) => top(i.target) === "console" && !["console", "consoles", "all-in-one"].includes(top(i.file))),
    ).toEqual([]);
    // the rule reads the console's imports (not vacuous)
    expect(all.some((i) => top(i.file) === "console" && i.target.startsWith("admin/"))).toBe(true);
  });

  // The console runs the admin API's services (admin/access.ts `perform`, the one gate of roles and
  // the journal), never its HTTP side: no Request built, no route handler, `allow` or route table imported.
  /** An admin route handler by its definition: a function of (Request, env…), or one answering a Handler. */
  const handlerShape = (name: string) =>
    new RegExp(
      [
        `export\\s+(?:async\\s+)?function\\s+${name}\\s*\\(\\s*\\w+\\s*:\\s*Request\\s*,`,
        `export\\s+function\\s+${name}\\s*\\([^)]*\\)\\s*:\\s*Handler<`,
        `export\\s+const\\s+${name}\\s*(?::[^=]*)?=\\s*(?:async\\s*)?\\(\\s*\\w+\\s*:\\s*Request\\s*,`,
      ].join("|"),
    );
  /** Where console files reach the admin API over HTTP in process: a Request built, a handler or the routes imported. */
  function adminRequests(texts: { file: string; text: string }[], adminSource: (target: string) => string): string[] {
    const out: string[] = [];
    for (const { file, text } of texts.filter((t) => top(t.file) === "console")) {
      if (/\bnew\s+Request\s*\(/.test(text)) out.push(`${file}: new Request`);
      for (const m of text.matchAll(/import\s+(type\s+)?(\{[^}]*\}|\*\s+as\s+\w+)\s+from\s+"([^"]+)"/g)) {
        const target = named(resolve(join(workers, dirname(file)), m[3]!));
        if (top(target) !== "admin" || m[1]) continue;
        if (target === "admin/routes" || target === "admin/index") {
          out.push(`${file}: ${target}`);
          continue;
        }
        const source = adminSource(target);
        const names = m[2]!.startsWith("*")
          ? [...source.matchAll(/export\s+(?:async\s+)?(?:function|const)\s+(\w+)/g)].map((x) => x[1]!)
          : m[2]!
              .slice(1, -1)
              .split(",")
              .map((n) => n.trim())
              .filter((n) => n !== "" && !n.startsWith("type "))
              .map((n) => n.split(/\s+as\s+/)[0]!);
        for (const n of names) if (handlerShape(n).test(source)) out.push(`${file}: ${target} ${n}`);
      }
    }
    return out;
  }
  const consoleTexts = files(join(workers, "console")).map((f) => ({
    file: relative(workers, f),
    text: readFileSync(f, "utf8"),
  }));
  const adminSource = (target: string) => readFileSync(join(workers, `${target}.ts`), "utf8");

  it("the console runs the admin API's services: no console file builds a Request or imports an admin route handler, `allow` or the route table", () => {
    expect(adminRequests(consoleTexts, adminSource)).toEqual([]);
    // the rule reads the console's imports of the services (not vacuous)
    expect(
      consoleTexts.some(({ text }) => /import \{[^}]*\bperform\b[^}]*\} from "\.\.\/admin\/access"/.test(text)),
    ).toBe(true);
  });

  it("finds a planted Request to the admin API in the console: a Request built, a handler, `allow` and the route table imported", () => {
    const probes = [
      { file: "console/apps.ts", text: "const res = await allow(role, handler)(new Request(req.url, init), env, rc);" },
      { file: "console/sms.ts", text: 'import { metrics, readMetrics } from "../admin/metrics";' },
      { file: "console/pages.ts", text: 'import { allow, perform } from "../admin/access";' },
      { file: "console/overview.ts", text: 'import { table } from "../admin/routes";' },
      { file: "console/reviews.ts", text: 'import * as keys from "../admin/keys";' },
    ];
    const fine = [
      {
        file: "console/apps.ts",
        text: 'import * as clients from "../admin/clients";\nawait perform(clients.read, env, by, { clientId });',
      },
      { file: "console/gate.ts", text: 'import { fromThisSite, type Actor } from "../admin/access";' },
      // the admin API's own files are not the console's
      { file: "admin/routes.ts", text: "new Request(url)" },
    ];
    expect(adminRequests([...probes, ...fine], adminSource)).toEqual([
      "console/apps.ts: new Request",
      "console/sms.ts: admin/metrics metrics",
      "console/pages.ts: admin/access allow",
      "console/overview.ts: admin/routes",
      "console/reviews.ts: admin/keys listKeys",
      "console/reviews.ts: admin/keys rotateKeys",
    ]);
  });

  it("the developer console uses core/, the admin API's checks, the consoles' frame, the provider's store and the sign-in only; only the consoles' worker and the all-in-one worker import it", () => {
    const bad = all.filter(
      (i) =>
        top(i.file) === "developers" &&
        !["developers", "core", "admin", "frame"].includes(top(i.target)) &&
        !i.target.startsWith("bare:") &&
        !i.target.startsWith("provider/store/") &&
        !i.target.startsWith("provider/signin/") &&
        i.target !== "provider/config",
    );
    expect(bad).toEqual([]);
    expect(
      all.filter(
        (i) =>
          top(i.target) === "developers" &&
          top(i.file) !== "developers" &&
          !["consoles/developers.ts", "all-in-one/index.ts"].includes(i.file),
      ),
    ).toEqual([]);
    expect(all.some((i) => top(i.file) === "developers" && i.target === "frame/layout")).toBe(true);
  });

  it("core/ (the package's, and the service's re-exports of it) is at most 1,400 lines", () => {
    // a re-export file is two lines of pointer, not code
    const reexport = (f: string) => /^\/\/.*\nexport \* from "[^"]+";\n$/.test(readFileSync(f, "utf8"));
    const core = [...files(join(workers, "core")).filter((f) => !reexport(f)), ...files(join(kitPackage, "core"))];
    const lines = core.reduce((n, f) => n + readFileSync(f, "utf8").split("\n").length, 0);
    expect(lines).toBeLessThanOrEqual(1400);
  });
});

// The kit package's modules (issue 46, the kit): the routes take one typed context (context.ts),
// the login store is an interface with its Durable Object and KV implementations, and no module
// depends on itself through others. A type-only import is an edge too: a circle of types is a
// circle of concepts.
describe("the kit package: no import circle, no source file above 600 lines", () => {
  const sources = files(kitPackage);
  const graph = graphOf(sources);

  it("reads type-only imports, re-exports and import() as edges (the check is not vacuous)", () => {
    const f = join(kitPackage, "a.ts");
    const text = 'import type { X } from "./b.js";\nexport { Y } from "./c.js";\nconst z = await import("./d.js");\n';
    expect(edges(f, text)).toEqual(["b", "c", "d"].map((n) => join(kitPackage, `${n}.ts`)));
    expect(sources.length).toBeGreaterThan(20);
    expect([...graph.values()].flat().length).toBeGreaterThan(60);
  });

  it("no file of packages/kit/src imports itself through others", () => {
    expect(circles(graph).map((c) => c.map((f) => relative(kitPackage, f)))).toEqual([]);
  });

  it("no source file of packages/kit/src is above 600 lines", () => {
    expect(sources.filter((f) => lineCount(f) > 600).map((f) => `${relative(kitPackage, f)}: ${lineCount(f)}`)).toEqual(
      [],
    );
  });
});

// The sign-in beside the OAuth protocol (issue 46, the sign-in): provider/signin/ is the interaction
// (its steps, pages, transaction, limits, carrier directory, SMS), provider/authorize/ the protocol
// that hands off to it and takes it back, provider/account/ the person's page that uses it through
// its purpose object. The sign-in imports neither of them (each hands it its purpose object); no
// file of the three folders is on an import circle, a type-only import counting as an edge (a
// circle of types is a circle of concepts); none holds a source file above 600 lines.
describe("the sign-in beside the protocol: no import circle, no source file above 600 lines", () => {
  const provider = join(workers, "provider");
  const folders = ["signin", "authorize", "account"].map((name) => join(provider, name));
  const inFolders = (f: string) => folders.some((d) => f.startsWith(`${d}/`));

  // The whole of workers/ and the package: a circle that passes through the store still holds these files.
  const sources = [...files(workers), ...files(kitPackage)];
  const graph = graphOf(sources);
  const ours = sources.filter(inFolders);
  const name = (f: string) => relative(provider, f);

  it("reads type-only imports, re-exports and import() as edges (the checks are not vacuous)", () => {
    const f = join(provider, "signin", "a.ts");
    const text =
      'import type { X } from "./b";\nexport { Y } from "../authorize/c";\nconst z = await import("./d.js");\n';
    expect(edges(f, text).map(name)).toEqual(["signin/b.ts", "authorize/c.ts", "signin/d.ts"]);
    expect(folders.map((d) => ours.filter((f) => f.startsWith(`${d}/`)).length).every((n) => n > 0)).toBe(true);
    expect(graph.get(join(provider, "authorize", "routes.ts"))).toContain(join(provider, "signin", "index.ts"));
    expect(graph.get(join(provider, "account", "purpose.ts"))).toContain(join(provider, "signin", "index.ts"));
    expect(graph.get(join(provider, "signin", "index.ts"))).toContain(join(provider, "signin", "steps.ts"));
  });

  it("no file of provider/signin/, provider/authorize/ or provider/account/ is on an import circle", () => {
    expect(
      circles(graph)
        .filter((c) => c.some(inFolders))
        .map((c) => c.map((f) => relative(workers, f))),
    ).toEqual([]);
  });

  it("no source file of provider/signin/, provider/authorize/ or provider/account/ is above 600 lines", () => {
    expect(ours.filter((f) => lineCount(f) > 600).map((f) => `${name(f)}: ${lineCount(f)}`)).toEqual([]);
  });

  it("the sign-in imports neither the protocol (authorize/) nor /account: each hands it its purpose object", () => {
    const signin = folders[0]!;
    const bad = ours
      .filter((f) => f.startsWith(`${signin}/`))
      .flatMap((f) =>
        graph
          .get(f)!
          .filter((t) => inFolders(t) && !t.startsWith(`${signin}/`))
          .map((t) => `${name(f)} -> ${name(t)}`),
      );
    expect(bad).toEqual([]);
  });
});

// The store (docs/architecture.md §1, §2; docs/storage.md): each Durable Object class has its folder,
// a room (provider/store/one-time/, directory/, guard/, metrics/), each group of D1 tables its one
// module (clients.ts, notices.ts, operators.ts, …: D1_OWNERS below) and the R2 audit trail its
// module (audit-archive.ts). A room reaches nothing beyond itself; what spans rooms is in the flows
// (provider/store/flows/), and the module exporting the classes to the workers (objects.ts) wires
// each object's alarm to them. A type-only import is an edge too. A D1 table is read and written
// only in its module: every table of migrations/ has one.
describe("the store: each object its room, the flows above the rooms, no circle", () => {
  const store = join(workers, "provider", "store");
  const core = join(workers, "core");
  const inside = (dir: string, f: string) => f.startsWith(`${dir}/`);
  const name = (f: string) => relative(store, f);
  const OBJECT_ROOMS = ["one-time/", "directory/", "guard/", "metrics/"];
  /** The module of each D1 table (docs/storage.md "Where each table is"). */
  const D1_OWNERS: Record<string, string> = {
    clients: "clients.ts",
    notices: "notices.ts",
    operator_invites: "operators.ts",
    operators: "operators.ts",
    api_tokens: "operators.ts",
    app_members: "developers.ts",
    app_invites: "developers.ts",
    app_test_numbers: "developers.ts",
    developer_notices: "developers.ts",
    app_reviews: "reviews.ts",
    change_journal: "change-journal.ts",
    signing_keys: "signing-keys.ts",
    event_deliveries: "event-deliveries.ts",
    ssf_streams: "ssf-streams.ts",
    ssf_poll: "ssf-streams.ts",
    ssf_tokens: "ssf-streams.ts",
    import_progress: "import-runs.ts",
    import_runs: "import-runs.ts",
    sms_outbox: "sms-outbox.ts",
    // the single-database layout's, read by the move to the shards only
    subscribers: "single-database.ts",
    links: "single-database.ts",
    auto_login_grants: "single-database.ts",
    audit_events: "single-database.ts",
    subscriber_ids: "single-database.ts",
    import_rows: "single-database.ts",
  };
  const D1_ROOMS = [...new Set(Object.values(D1_OWNERS))];
  /** A room: the folder of a Durable Object class, or the one module of a group of D1 tables or of the R2 trail. */
  const ROOMS = [...OBJECT_ROOMS, ...D1_ROOMS, "audit-archive.ts"];
  const roomOf = (f: string) => ROOMS.find((r) => name(f) === r || (r.endsWith("/") && name(f).startsWith(r)));
  /** The classes' RPC surfaces: the only files that extend the runtime's DurableObject. */
  const CLASSES = [
    join(store, "one-time", "one-time-store.ts"),
    join(store, "directory", "directory-shard.ts"),
    join(store, "guard", "guard-store.ts"),
    join(store, "metrics", "metrics-store.ts"),
  ];
  /** Read by every room: the store's variables. */
  const CONFIG = join(store, "config.ts");
  const FLOWS = join(store, "flows");
  const EXPORTER = join(store, "objects.ts");
  /** The store's files that are neither a room nor a flow, and why. */
  const NOT_ROOMS: Record<string, string> = {
    "config.ts": "the store's variables, read by every room",
    "objects.ts": "hosts the Durable Object classes and wires their alarms to the flows",
    "hosts.ts": "pure: which hosts an app's events_uri may name; holds nothing",
    "console-session.ts":
      "the consoles' sessions: entries of the one-time store, through its door; no table of its own",
    "sms/":
      "the SMS senders (an outside service, and the dev outbox's D1 module): the sign-in's codes and the flows' passkey notices go through them",
  };
  const notRoom = (f: string) =>
    Object.keys(NOT_ROOMS).some((k) => (k.endsWith("/") ? name(f).startsWith(k) : name(f) === k));
  /** D1's tables: every CREATE TABLE of migrations/ not dropped by a later one. */
  const migrations = join(root, "migrations");
  const d1Tables = (() => {
    const sql = readdirSync(migrations)
      .filter((f) => f.endsWith(".sql"))
      .sort()
      .map((f) => readFileSync(join(migrations, f), "utf8"))
      .join("\n");
    const made = [...sql.matchAll(/\bCREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)/gi)].map((m) => m[1]!);
    const dropped = new Set([...sql.matchAll(/\bDROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?(\w+)/gi)].map((m) => m[1]!));
    return [...new Set(made)].filter((t) => !dropped.has(t));
  })();
  /**
   * The statements on a D1 table outside its module, as `file: table` (files named from workers/).
   * A Durable Object's tables/ modules are left out: their SQL is the object's own tables (a
   * directory shard has `links` too), and they run no D1 statement (checked below).
   */
  function d1Trespass(texts: { file: string; text: string }[], tables: string[]): string[] {
    return texts
      .filter(({ file }) => !/^provider\/store\/[^/]+\/tables\//.test(file))
      .flatMap(({ file, text }) =>
        tables
          .filter(
            (t) =>
              file !== `provider/store/${D1_OWNERS[t]}` &&
              new RegExp(`\\b(?:FROM|INTO|UPDATE|JOIN|TABLE)\\s+${t}\\b`).test(text),
          )
          .map((t) => `${file}: ${t}`),
      );
  }

  const sources = files(store);
  const graph = graphOf(sources);
  /** Every import of the store's files, as `file -> target` (targets outside the store from workers/). */
  const shown = (f: string, t: string) =>
    `${name(f)} -> ${t.startsWith("bare:") ? t : inside(store, t) ? name(t) : relative(workers, t)}`;
  const importsOf = (keep: (f: string, t: string) => boolean) =>
    sources.flatMap((f) =>
      graph
        .get(f)!
        .filter((t) => keep(f, t))
        .map((t) => shown(f, t)),
    );

  it("reads type-only imports, re-exports, imports for effect and import() as edges, and finds a circle (the checks are not vacuous)", () => {
    const f = join(store, "one-time", "a.ts");
    const text = [
      'import type { X } from "./b";',
      "import {",
      "  type Y,",
      '} from "../directory/c";',
      'export { Z } from "../flows/d";',
      'export * from "./e.js";',
      'import "./f";',
      'type G = import("../g").G;',
      'import { DurableObject } from "cloudflare:workers";',
    ].join("\n");
    expect(edges(f, text).map((t) => (t.startsWith("bare:") ? t : name(t)))).toEqual([
      "one-time/b.ts",
      "directory/c.ts",
      "flows/d.ts",
      "one-time/e.ts",
      "bare:cloudflare:workers",
      "one-time/f.ts",
      "g.ts",
    ]);
    expect(
      circles(
        new Map([
          ["a", ["b"]],
          ["b", ["c"]],
          ["c", ["a"]],
          ["d", ["a"]],
        ]),
      ),
    ).toEqual([["a", "b", "c"]]);
    for (const room of ROOMS) expect(sources.some((f) => roomOf(f) === room)).toBe(true);
    expect(graph.get(EXPORTER)).toContain(join(FLOWS, "one-time-alarm.ts"));
    expect(new Set(graph.get(join(FLOWS, "end-plids.ts"))!.map(roomOf).filter(Boolean)).size).toBeGreaterThan(2);
    expect(graph.get(join(store, "one-time", "one-time-store.ts"))).toContain(
      join(store, "one-time", "tables", "codes.ts"),
    );
  });

  it("an object's folder imports only the core, the store's variables (config.ts) and itself", () => {
    const bad = importsOf((f, t) => {
      const room = roomOf(f);
      if (!room || !OBJECT_ROOMS.includes(room)) return false;
      if (t === "bare:cloudflare:workers") return !CLASSES.includes(f);
      return !(inside(core, t) || t === CONFIG || roomOf(t) === room);
    });
    expect(bad).toEqual([]);
  });

  it("the D1 and R2 modules (clients.ts, notices.ts, audit-archive.ts, …) import only the core and config.ts; config.ts only the core", () => {
    const leaves = sources.filter((f) => f === CONFIG || (roomOf(f) && !OBJECT_ROOMS.includes(roomOf(f)!)));
    expect(leaves.length).toBe(D1_ROOMS.length + 2);
    expect(
      leaves.flatMap((f) =>
        graph
          .get(f)!
          .filter((t) => !(inside(core, t) || (t === CONFIG && f !== CONFIG)))
          .map((t) => shown(f, t)),
      ),
    ).toEqual([]);
  });

  it("every file of the store is in a room or a flow, or is named here with its reason", () => {
    const known = (f: string) => roomOf(f) || inside(FLOWS, f) || notRoom(f);
    expect(sources.filter((f) => !known(f)).map(name)).toEqual([]);
    for (const f of Object.keys(NOT_ROOMS))
      expect(sources.some((s) => s === join(store, f) || s.startsWith(join(store, f)))).toBe(true);
  });

  it("every D1 table of migrations/ has its module, and docs/storage.md names it", () => {
    expect(d1Tables.length).toBeGreaterThan(20);
    expect(d1Tables.filter((t) => !(t in D1_OWNERS))).toEqual([]);
    expect(Object.keys(D1_OWNERS).filter((t) => !d1Tables.includes(t))).toEqual([]);
    // the index's rows from "D1 (`DB`)" to the next store: `table`s and their `module`
    let store = "";
    const d1Rows = readFileSync(join(root, "docs", "storage.md"), "utf8")
      .split("\n")
      .filter((l) => l.startsWith("| "))
      .map((l) => l.split("|").map((c) => c.trim()))
      .filter(([, first]) => ((store = first || store), store.startsWith("D1")));
    expect(
      d1Tables.filter(
        (t) => !d1Rows.some(([, , tables, module]) => tables!.includes(`\`${t}\``) && module === `\`${D1_OWNERS[t]}\``),
      ),
    ).toEqual([]);
  });

  it("a D1 table is read and written only in its module (every statement naming it: FROM, INTO, UPDATE, JOIN)", () => {
    const texts = files(workers).map((f) => ({ file: relative(workers, f), text: readFileSync(f, "utf8") }));
    expect(d1Trespass(texts, d1Tables)).toEqual([]);
    // a Durable Object's tables/ modules, left out above, run no D1 statement
    expect(
      texts
        .filter(({ file, text }) => /\/tables\//.test(file) && /\.prepare\(|D1Database|\bDB\b/.test(text))
        .map(({ file }) => file),
    ).toEqual([]);
    // the rule reads the owners' statements (not vacuous)
    for (const m of D1_ROOMS)
      expect(
        d1Trespass(
          texts.filter(({ file }) => file === `provider/store/${m}`).map((t) => ({ ...t, file: "elsewhere.ts" })),
          d1Tables,
        ).length,
        m,
      ).toBeGreaterThan(0);
  });

  it("finds a planted statement on a D1 table outside its module", () => {
    const probes = [
      {
        file: "provider/store/flows/alerts.ts",
        text: 'env.DB.prepare("SELECT count(*) AS n FROM notices WHERE kind = ?")',
      },
      { file: "admin/import-progress.ts", text: "`INSERT INTO import_progress (run) VALUES (?)`" },
      { file: "provider/signin/sms/outbox.ts", text: '"DELETE FROM sms_outbox WHERE at < ?"' },
      { file: "developers/apps.ts", text: '"UPDATE app_members SET role = ? WHERE client_id = ?"' },
      { file: "console/routes.ts", text: '"SELECT * FROM app_reviews r JOIN clients c ON c.client_id = r.client_id"' },
    ];
    const owned = [
      { file: "provider/store/notices.ts", text: '"SELECT count(*) AS n FROM notices"' },
      // a directory shard's own `links`, not D1's
      { file: "provider/store/directory/tables/links.ts", text: '"SELECT plid FROM links WHERE subscriber_id = ?"' },
      // prose is not a statement
      { file: "provider/account/routes.ts", text: "// the person's links and grants, from clients they trust" },
    ];
    expect(d1Trespass([...probes, ...owned], d1Tables)).toEqual([
      "provider/store/flows/alerts.ts: notices",
      "admin/import-progress.ts: import_progress",
      "provider/signin/sms/outbox.ts: sms_outbox",
      "developers/apps.ts: app_members",
      "console/routes.ts: clients",
      "console/routes.ts: app_reviews",
    ]);
  });

  it("only the flows and the module exporting the classes (objects.ts) import two rooms", () => {
    const bad = sources
      .filter((f) => !inside(FLOWS, f) && f !== EXPORTER)
      .map((f) => ({ f, rooms: new Set([roomOf(f), ...graph.get(f)!.map(roomOf)].filter(Boolean)) }))
      .filter(({ rooms }) => rooms.size > 1)
      .map(({ f, rooms }) => `${name(f)}: ${[...rooms].join(", ")}`);
    expect(bad).toEqual([]);
  });

  it("nothing in the store imports a route folder: only the core, the store itself and the Workers runtime", () => {
    expect(importsOf((_, t) => !(inside(core, t) || inside(store, t) || t === "bare:cloudflare:workers"))).toEqual([]);
  });

  it("the workers export the Durable Object classes from objects.ts, which wires their alarms to the flows", () => {
    const exporters = files(workers).flatMap((f) =>
      [...readFileSync(f, "utf8").matchAll(/^export\s*\{([^}]*)\}\s*from\s*"([^"]+)"/gm)]
        .filter((m) => /\b(OneTimeStore|DirectoryShard)\b/.test(m[1]!))
        .map((m) => `${relative(workers, f)} -> ${relative(workers, resolve(dirname(f), m[2]!))}`),
    );
    expect(exporters.length).toBeGreaterThan(0);
    expect(exporters.filter((e) => !e.endsWith("-> provider/store/objects"))).toEqual([]);
  });

  /**
   * The assignments, outside the store, to a property of a name imported from the store
   * (`hooks.send = f`, `hooks["send"] = f`): a handler set as a global, which a host that forgets
   * it leaves unset with nothing failing. Files named from workers/.
   */
  function handlersSet(texts: { file: string; text: string }[]): string[] {
    return texts
      .filter(({ file }) => !file.startsWith("provider/store/"))
      .flatMap(({ file, text }) => {
        const names = [...text.matchAll(/(?:^|\n)\s*import\s*\{([^}]*)\}\s*from\s*"([^"]+)"/g)]
          .filter((m) => relative(workers, resolve(dirname(join(workers, file)), m[2]!)).startsWith("provider/store/"))
          .flatMap((m) =>
            m[1]!.split(",").map((n) =>
              n
                .trim()
                .replace(/^type\s+/, "")
                .split(/\s+as\s+/)
                .pop()!,
            ),
          )
          .filter(Boolean);
        return names
          .filter((n) => new RegExp(`(?:^|[^.\\w$])${n}\\s*(?:\\.\\s*[\\w$]+|\\[[^\\]]+\\])\\s*=(?!=)`).test(text))
          .map((n) => `${file}: ${n}`);
      });
  }

  it("no worker sets a handler on the store: objects.ts wires every object's alarm and notice, and nothing outside the store assigns to what it imports from the store", () => {
    const texts = files(workers).map((f) => ({ file: relative(workers, f), text: readFileSync(f, "utf8") }));
    expect(handlersSet(texts)).toEqual([]);
    // the shards' alarms are handed the passkey notice where the class is made
    expect(readFileSync(EXPORTER, "utf8")).toMatch(/runQueuedJobs\([^)]*usableNotice\)/);
  });

  it("finds a planted handler set on the store by a worker entry", () => {
    const probes = [
      {
        file: "provider/authorize/index.ts",
        text: 'import { passkeyNotices } from "../store/objects";\nimport { usableNotice } from "../signin/index";\npasskeyNotices.send = usableNotice;\n',
      },
      {
        file: "all-in-one/index.ts",
        text: 'import { type Hooks, jobHooks as hooks } from "../provider/store/flows/directory-jobs";\nhooks["beforeStep"] = async () => {};\n',
      },
    ];
    const clean = [
      // a comparison is not an assignment; a name of the sign-in is not the store's
      {
        file: "provider/token/routes.ts",
        text: 'import { tally } from "../store/metrics/index";\nif (tally.x === 1) {}\n',
      },
      { file: "console/routes.ts", text: 'import { hooks } from "../provider/signin/index";\nhooks.x = 1;\n' },
    ];
    expect(handlersSet([...probes, ...clean])).toEqual([
      "provider/authorize/index.ts: passkeyNotices",
      "all-in-one/index.ts: hooks",
    ]);
  });

  it("no file of the store (the rooms, the flows, objects.ts) is on an import circle", () => {
    expect(circles(graph).map((c) => c.map(name))).toEqual([]);
  });

  it("a Durable Object's SQL is in its tables/ modules only, and every statement on D1 `clients` in clients.ts", () => {
    const objectSql = sources.filter(
      (f) => /\bsql\s*\.\s*exec\b/.test(readFileSync(f, "utf8")) && !/\/tables\/[^/]+\.ts$/.test(f),
    );
    expect(objectSql.map(name)).toEqual([]);
    const clientsSql = files(workers).filter(
      (f) => f !== join(store, "clients.ts") && /\b(?:FROM|INTO|UPDATE|JOIN)\s+clients\b/.test(readFileSync(f, "utf8")),
    );
    expect(clientsSql.map((f) => relative(workers, f))).toEqual([]);
  });

  it("no source file of the store or of the move from the single database (admin/migrate/) is above 600 lines", () => {
    const owned = [...sources, ...files(join(workers, "admin", "migrate"))];
    expect(owned.filter((f) => lineCount(f) > 600).map((f) => `${relative(workers, f)}: ${lineCount(f)}`)).toEqual([]);
  });
});

// The whole house: no file of workers/ or of the package is on an import circle (a type-only import
// counts), and none is above 600 lines: each folder's block above says the same of its own files
// with its own reason; this one leaves no folder out.
describe("the whole house: no import circle, no source file above 600 lines", () => {
  const sources = [...files(workers), ...files(kitPackage)];
  const graph = graphOf(sources);

  it("reads every source file (the rules below are not vacuous)", () => {
    expect(sources.length).toBeGreaterThan(120);
    expect([...graph.values()].flat().filter((t) => !t.startsWith("bare:")).length).toBeGreaterThan(500);
  });

  it("no file of workers/ or packages/kit/src is on an import circle", () => {
    expect(circles(graph).map((c) => c.map((f) => relative(root, f)))).toEqual([]);
  });

  it("no source file of workers/ or packages/kit/src is above 600 lines", () => {
    expect(sources.filter((f) => lineCount(f) > 600).map((f) => `${relative(root, f)}: ${lineCount(f)}`)).toEqual([]);
  });
});

// One door per room (docs/architecture.md §1): outside a room, only its index.ts is imported, the
// room's functions and public types; store/objects.ts alone imports a room's Durable Object class
// module, to host the class. A room's inside (its tables/, its object, its helpers) can change
// without any caller changing.
describe("one door per room: outside a room only its index.ts is imported", () => {
  const DOORS = [
    "provider/store/one-time",
    "provider/store/directory",
    "provider/store/guard",
    "provider/store/metrics",
    "provider/store/sms",
    "provider/signin",
  ];
  const CLASS_MODULES = [
    "provider/store/one-time/one-time-store",
    "provider/store/directory/directory-shard",
    "provider/store/guard/guard-store",
    "provider/store/metrics/metrics-store",
  ];
  /** The imports that pass by a room's door: a file outside the room importing anything but its index. */
  function throughWalls(list: { file: string; target: string }[]): string[] {
    return list
      .filter(({ file, target }) =>
        DOORS.some(
          (room) =>
            target.startsWith(`${room}/`) &&
            !file.startsWith(`${room}/`) &&
            target !== `${room}/index` &&
            !(file === "provider/store/objects.ts" && CLASS_MODULES.includes(target)),
        ),
      )
      .map(({ file, target }) => `${file} -> ${target}`);
  }
  const all = imports();

  it("each room has its door, and callers use it (the rule is not vacuous)", () => {
    for (const room of DOORS) {
      expect(readFileSync(join(workers, room, "index.ts"), "utf8")).toMatch(/^export /m);
      expect(
        all.some((i) => i.target === `${room}/index` && !i.file.startsWith(`${room}/`)),
        room,
      ).toBe(true);
    }
  });

  it("no file outside a room imports past its door", () => {
    expect(throughWalls(all)).toEqual([]);
  });

  it("0 imports of a room's tables/ from outside the room", () => {
    expect(
      all.filter((i) => /\/tables\//.test(i.target) && !i.file.startsWith(i.target.split("/tables/")[0]!)),
    ).toEqual([]);
  });

  it("finds a planted import past a door: a tables/ module from a route, a sign-in step from a console, the guard's rules from the admin API", () => {
    const probes = [
      { file: "provider/token/routes.ts", target: "provider/store/one-time/tables/codes" },
      { file: "console/routes.ts", target: "provider/signin/steps" },
      { file: "admin/guard.ts", target: "provider/store/guard/rules" },
      { file: "provider/store/flows/alerts.ts", target: "provider/store/metrics/tables/rollups" },
      { file: "developers/gate.ts", target: "provider/store/directory/directory-shard" },
    ];
    expect(throughWalls([...all, ...probes])).toEqual(probes.map((p) => `${p.file} -> ${p.target}`));
  });
});

// The sign-in names no caller (docs/architecture.md §2): a first-party page (/account, a console)
// names itself, its mark, its words and its end, and hands that to the sign-in, so nothing under
// workers/provider names a console, as a string or by the name its pages show. The two consoles
// share what both draw and their door in the consoles' frame (workers/frame/), which stands below
// both: neither console imports the other; the consoles' worker (workers/consoles/) and the
// all-in-one worker mount both.
describe("the sign-in names no caller, and the consoles import not each other", () => {
  /** A console's mark as a string literal (any quotes), or a console's name as its pages show it. */
  const CALLER = /(["'`])(?:console|developers)\1|운영 콘솔|개발자 콘솔|Operations console|Developer console/;
  /** The files whose text names a console. */
  function callersNamed(texts: { file: string; text: string }[]): string[] {
    return texts.filter(({ text }) => CALLER.test(text)).map(({ file }) => file);
  }
  const provider = files(join(workers, "provider")).map((f) => ({ file: named(f), text: readFileSync(f, "utf8") }));
  const all = imports();
  /** The imports from one console to the other, either way. */
  function crossed(list: { file: string; target: string }[]): string[] {
    const consoles = ["console", "developers"];
    return list
      .filter(
        (i) => consoles.includes(top(i.file)) && consoles.includes(top(i.target)) && top(i.file) !== top(i.target),
      )
      .map(({ file, target }) => `${file} -> ${target}`);
  }

  it("reads every file of the provider, and both consoles use the frame (the rules are not vacuous)", () => {
    expect(provider.length).toBeGreaterThan(100);
    expect(provider.map((p) => p.file)).toContain("provider/signin/first-party.ts");
    expect(all.some((i) => top(i.file) === "console" && top(i.target) === "frame")).toBe(true);
    expect(all.some((i) => top(i.file) === "developers" && top(i.target) === "frame")).toBe(true);
  });

  it('no file under workers/provider names a console: neither "console" nor "developers" as a string, nor a console\'s name', () => {
    expect(callersNamed(provider)).toEqual([]);
  });

  it("finds a caller's name planted in the sign-in and its store", () => {
    const probes = [
      { file: "provider/signin/pages.ts", text: 'if (ctx.purpose === "console") return [title, lead];' },
      { file: "provider/signin/first-party.ts", text: "export function consoleSignIn(mark: 'developers') {}" },
      { file: "provider/store/one-time/signin-store.ts", text: "export type FirstPartyMark = `console`;" },
      { file: "provider/signin/i18n.ts", text: '  developersTitle: "개발자 콘솔",' },
      { file: "provider/signin/i18n.ts", text: '  consoleTitle: "Operations console",' },
    ];
    expect(callersNamed([...provider, ...probes])).toEqual(probes.map((p) => p.file));
  });

  it("console/ and developers/ import not each other", () => {
    expect(crossed(all)).toEqual([]);
  });

  it("finds a planted import between the consoles, either way", () => {
    const probes = [
      { file: "console/routes.ts", target: "developers/routes" },
      { file: "developers/gate.ts", target: "console/layout" },
    ];
    expect(crossed([...all, ...probes])).toEqual(probes.map((p) => `${p.file} -> ${p.target}`));
  });

  it("the frame stands below both consoles: it uses core/, the admin API's checks, the provider's store and the sign-in only; only the consoles import it", () => {
    expect(
      all.filter(
        (i) =>
          top(i.file) === "frame" &&
          !["frame", "core", "admin"].includes(top(i.target)) &&
          !i.target.startsWith("bare:") &&
          !i.target.startsWith("provider/store/") &&
          !i.target.startsWith("provider/signin/") &&
          i.target !== "provider/config",
      ),
    ).toEqual([]);
    expect(
      all.filter((i) => top(i.target) === "frame" && !["frame", "console", "developers"].includes(top(i.file))),
    ).toEqual([]);
  });
});
