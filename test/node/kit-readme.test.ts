// The kit's README (packages/kit/README.md) as a developer copies it: every ```ts and ```tsx block
// is written to a file and the lot type-checked under `strict` (the TypeScript of node_modules, as
// `tsc --noEmit` would), with the Workers types and `phone-login-kit` resolved to this checkout's
// packages/kit/src. A block whose first line names a file (`// functions/auth/[[path]].ts`) is
// written at that path; the blocks under one heading share a folder, so a recipe's files import
// each other as the README has them. The example apps (examples/*/src) are checked in the same
// program, against the same kit.
//
// What the snippets take from outside the kit is declared here, not installed:
// - `Env`: the interface `wrangler types` writes for the README's configuration (its wrangler.toml
//   blocks and .dev.vars), and `CloudflareEnv`, what `wrangler types --env-interface CloudflareEnv`
//   writes for a Next.js app on OpenNext;
// - FRAMEWORKS: the few declarations of React Router 7, Next.js and @opennextjs/cloudflare that the
//   recipes use, with the signatures those packages declare (the packages themselves, with React's
//   types, are hundreds of megabytes for a dozen names). A recipe that uses a name not declared
//   there fails here: add its declaration from the package's own .d.ts.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const README = "packages/kit/README.md";

interface Snippet {
  /** The README line of the block's first code line. */
  line: number;
  /** Where the block is written, relative to the check's folder. */
  file: string;
  code: string;
}

const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "") || "section";

/**
 * The ```ts and ```tsx blocks of a markdown text, each in the folder of its heading
 * (`12-pages-functions/`): at the path its first line names (`// functions/auth/[[path]].ts`), or
 * as `snippet-<line>.ts`.
 */
function snippets(markdown: string): Snippet[] {
  const lines = markdown.split("\n");
  const out: Snippet[] = [];
  let section = "00-top";
  let sections = 0;
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]!);
    if (!fence) {
      const heading = /^#{1,6}\s+(.*)$/.exec(lines[i]!);
      if (heading) section = `${String(++sections).padStart(2, "0")}-${slug(heading[1]!)}`;
      continue;
    }
    const [, indent, marks, lang] = fence;
    const end = lines.findIndex((l, j) => j > i && l.trim() === marks);
    if (end === -1) throw new Error(`${README}:${i + 1}: a code block that never closes`);
    if (lang === "ts" || lang === "tsx") {
      const body = lines.slice(i + 1, end).map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l));
      const named = /^\/\/ ([\w./[\]$-]+\.tsx?)\b/.exec(body[0] ?? "");
      const file = `${section}/${named ? named[1] : `snippet-${i + 2}.${lang}`}`;
      if (out.some((s) => s.file === file)) throw new Error(`${README}:${i + 1}: a second block at ${file}`);
      out.push({ line: i + 2, file, code: body.join("\n") + "\n" });
    }
    i = end;
  }
  return out;
}

/** What `wrangler types` writes for the README's configuration (worker-configuration.d.ts). */
const WRANGLER_TYPES = `interface Env {
  PHONE_LOGIN_PROVIDER_URL: string;
  PHONE_LOGIN_CLIENT_ID: string;
  PHONE_LOGIN_REDIRECT_URI: string;
  PHONE_LOGIN_CLIENT_SECRET: string;
  PHONE_LOGIN_SEAL_KEY: string;
  PHONE_LOGIN_KV: KVNamespace;
  PHONE_LOGIN_STORE: DurableObjectNamespace<import("phone-login-kit").PhoneLoginStore>;
  /** "A service on your own account": the service binding to the login service. */
  PHONE_LOGIN: Fetcher;
}
/** The same for a Next.js app (\`wrangler types --env-interface CloudflareEnv\`). */
interface CloudflareEnv extends Env {}
`;

/** The framework names the recipes use, as the packages declare them (see the top of this file). */
const FRAMEWORKS = `// react-router 7 (dist/development/index.d.ts; the load context without middleware)
declare module "react-router" {
  export interface AppLoadContext {}
  export interface ServerBuild {}
  export type RequestHandler = (request: Request, loadContext?: AppLoadContext) => Promise<Response>;
  export function createRequestHandler(
    build: ServerBuild | (() => ServerBuild | Promise<ServerBuild>),
    mode?: string,
  ): RequestHandler;
  export interface LoaderFunctionArgs<Context = AppLoadContext> {
    request: Request;
    params: Record<string, string | undefined>;
    context: Context;
  }
  export type ActionFunctionArgs<Context = AppLoadContext> = LoaderFunctionArgs<Context>;
  export function redirect(url: string, init?: number | ResponseInit): Response;
  export function redirectDocument(url: string, init?: number | ResponseInit): Response;
  export function useLoaderData<T = unknown>(): T extends (...args: never[]) => infer R ? Awaited<R> : T;
}
// @react-router/dev: the server build the Vite plugin provides
declare module "virtual:react-router/server-build" {
  const build: import("react-router").ServerBuild;
  export = build;
}
// vite/client
interface ImportMeta {
  readonly env: { readonly MODE: string; readonly DEV: boolean; readonly PROD: boolean };
}
// next 15 and 16 (headers.d.ts, navigation.d.ts)
declare module "next/headers" {
  export type ReadonlyHeaders = Headers & {
    append(...args: any[]): void;
    set(...args: any[]): void;
    delete(...args: any[]): void;
  };
  export function headers(): Promise<ReadonlyHeaders>;
}
declare module "next/navigation" {
  export function redirect(url: string): never;
}
// @opennextjs/cloudflare 1 (dist/api/cloudflare-context.d.ts)
declare module "@opennextjs/cloudflare" {
  export type CloudflareContext = { env: CloudflareEnv; cf: IncomingRequestCfProperties | undefined; ctx: ExecutionContext };
  export function getCloudflareContext(options: { async: true }): Promise<CloudflareContext>;
  export function getCloudflareContext(options?: { async: false }): CloudflareContext;
}
// react 19 with "jsx": "react-jsx" (the elements only)
declare module "react/jsx-runtime" {
  export namespace JSX {
    interface Element {}
    interface IntrinsicElements {
      [name: string]: Record<string, unknown>;
    }
  }
  export function jsx(type: unknown, props: unknown, key?: string): JSX.Element;
  export const jsxs: typeof jsx;
  export const Fragment: unique symbol;
}
`;

const KIT = join(ROOT, "packages", "kit", "src");

/** The check's tsconfig: strict, the Workers types, the package's names mapped to its source. */
const tsconfig = {
  compilerOptions: {
    target: "es2022",
    module: "es2022",
    moduleResolution: "bundler",
    lib: ["es2023"],
    types: ["@cloudflare/workers-types"],
    jsx: "react-jsx",
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    isolatedModules: true,
    moduleDetection: "force",
    paths: {
      "phone-login-kit": [join(KIT, "index.ts")],
      "phone-login-kit/hono": [join(KIT, "hono.ts")],
    },
  },
  include: ["**/*.ts", "**/*.tsx"],
};

interface Diagnostic {
  /** `packages/kit/README.md:12` for a snippet, else the file as tsc names it. */
  at: string;
  code: string;
  message: string;
}

/**
 * Writes the snippets (and any other files) into `dir` beside the declarations above and checks
 * them as `tsc --noEmit -p dir` would, except that a syntax error in one block does not hide the
 * type errors of the others (tsc stops at syntax errors). Diagnostics in a snippet are given at its
 * README line.
 */
function check(dir: string, files: Snippet[]): Diagnostic[] {
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(tsconfig, null, 2));
  writeFileSync(join(dir, "wrangler-types.d.ts"), WRANGLER_TYPES);
  writeFileSync(join(dir, "frameworks.d.ts"), FRAMEWORKS);
  for (const s of files) {
    mkdirSync(dirname(join(dir, s.file)), { recursive: true });
    writeFileSync(join(dir, s.file), s.code);
  }
  const config = ts.getParsedCommandLineOfConfigFile(
    join(dir, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  )!;
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
  const all = [
    ...config.errors,
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    // the files written here; the kit's own are checked by the repository's tsconfig.json
    ...program
      .getSourceFiles()
      .filter((f) => !relative(dir, f.fileName).startsWith(".."))
      .flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)]),
  ];
  return all
    .filter((d) => d.category === ts.DiagnosticCategory.Error)
    .map((d) => {
      const message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
      const code = `TS${d.code}`;
      if (!d.file) return { at: "(program)", code, message };
      const line = d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1;
      const snippet = files.find((s) => s.line > 0 && join(dir, s.file) === d.file!.fileName);
      const at = snippet ? `${README}:${snippet.line + line - 1}` : `${relative(dir, d.file.fileName)}:${line}`;
      return { at, code, message };
    });
}

/** The example apps' sources, checked with the README (`line` 0: not README lines). */
function exampleFiles(): Snippet[] {
  const dir = join(ROOT, "examples");
  return readdirSync(dir).flatMap((name) =>
    readdirSync(join(dir, name, "src"))
      .filter((f) => /\.tsx?$/.test(f))
      .map((f) => ({ line: 0, file: `examples/${name}/${f}`, code: readFileSync(join(dir, name, "src", f), "utf8") })),
  );
}

const format = (ds: Diagnostic[]) => ds.map((d) => `${d.at}: ${d.code} ${d.message}`).join("\n");

describe("the kit's README snippets", () => {
  let work: string;
  let found: Snippet[];
  let diagnostics: Diagnostic[];

  beforeAll(() => {
    // inside the repository, so that `hono` and the Workers types resolve from its node_modules
    mkdirSync(join(ROOT, "node_modules", ".cache"), { recursive: true });
    work = mkdtempSync(join(ROOT, "node_modules", ".cache", "kit-readme-"));
    found = snippets(readFileSync(join(ROOT, README), "utf8"));
    // A block the check must refuse, checked in the same program: proof that it reports.
    const canary: Snippet = {
      line: 0,
      file: "canary/index.ts",
      code: `export default { async fetch(request) { return new Response(String(request)); } };\n`,
    };
    diagnostics = check(work, [...found, ...exampleFiles(), canary]);
  });

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("refuses what strict refuses (a handler whose request has no type)", () => {
    expect(diagnostics.filter((d) => d.at.startsWith("canary/")).map((d) => d.code)).toEqual(["TS7006"]);
  });

  it("holds the recipes whose frameworks are declared above", () => {
    const files = found.map((s) => s.file.slice(s.file.indexOf("/") + 1));
    for (const recipe of [
      "functions/auth/[[path]].ts", // Pages Functions
      "workers/app.ts", // React Router
      "app/routes/account.tsx",
      "custom-worker.ts", // Next.js on OpenNext
      "lib/session.ts",
    ])
      expect(files).toContain(recipe);
  });

  it("type-checks every block under strict, with phone-login-kit as this checkout's package", () => {
    const others = diagnostics.filter((d) => !d.at.startsWith("canary/"));
    expect(format(others), `${others.length} errors`).toBe("");
  });
});
