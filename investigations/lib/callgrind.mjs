// Instruction counts of workerd under valgrind's callgrind (investigations/instructions.mjs, capacity/scale.mjs --instructions): a wrapper that
// Miniflare starts in place of the workerd binary, instrumentation switched on only around what is
// measured, and the dumps read back by function. Instructions do not depend on what else the
// machine is doing, so two builds or two scenarios compare to within a few per cent where CPU time
// on a shared machine spreads by half (docs/benchmarks.md "Instructions").

import { execFileSync } from "node:child_process";
import { chmodSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** Whether valgrind (Debian's package `valgrind`) is on this machine. */
export function haveValgrind() {
  try {
    execFileSync("valgrind", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes the wrapper into `dir` and returns its path: set it as MINIFLARE_WORKERD_PATH before
 * Miniflare starts. `--fair-sched` lets V8's compiler threads run as they would (without it the
 * optimized code arrives late and the counts depend on it); instrumentation starts off.
 *
 * `v8Flags` (e.g. ["--predictable"]) go into the config Miniflare writes on workerd's stdin, the
 * only place workerd takes them (workerd.capnp `Config.v8Flags`): the wrapper turns the binary
 * config into capnp's text, adds the list and turns it back, with Debian's `capnproto` and
 * `libcapnp-dev` (for `/capnp/c++.capnp`). `--predictable` runs V8's compilers and collector on
 * the isolate's own thread at points its own work decides, so the optimized code arrives after the
 * same calls in every round, not when a compiler thread happens to finish.
 */
export function workerdWrapper(root, dir, v8Flags = []) {
  // the workerd that Miniflare runs: its dependency, as the bench package installs it
  const miniflare = createRequire(join(root, "bench", "package.json")).resolve("miniflare");
  const workerdPackage = createRequire(miniflare).resolve("workerd/package.json");
  const workerd = createRequire(miniflare)("workerd").default;
  const path = join(dir, "workerd-callgrind");
  const valgrind = `valgrind --tool=callgrind --fair-sched=yes --instr-atstart=no --smc-check=all-non-file --error-limit=no --callgrind-out-file=${dir}/cg.%p ${workerd} "$@"`;
  if (v8Flags.length === 0) {
    writeFileSync(path, `#!/bin/sh\nexec ${valgrind}\n`);
  } else {
    try {
      execFileSync("capnp", ["--version"], { stdio: "ignore" });
    } catch {
      throw new Error("V8 flags need capnp (apt-get install -y capnproto libcapnp-dev)");
    }
    // capnp 0.9 does not take a string as a struct's default (`:ServiceDesignator = "internet"`)
    const schema = join(dir, "workerd.capnp");
    writeFileSync(
      schema,
      readFileSync(join(dirname(workerdPackage), "workerd.capnp"), "utf8").replace(
        /:ServiceDesignator = "([^"]*)"/g,
        ':ServiceDesignator = (name = "$1")',
      ),
    );
    const list = v8Flags.map((f) => JSON.stringify(f)).join(", ");
    writeFileSync(
      path,
      [
        "#!/bin/sh",
        "set -e",
        `t=$(mktemp -p ${dir} config.XXXXXX)`,
        `capnp convert binary:text -I/usr/include ${schema} Config > "$t.txt"`,
        `{ printf '%s' '(v8Flags = [${list}], '; tail -c +2 "$t.txt"; } | capnp convert text:binary -I/usr/include ${schema} Config > "$t"`,
        `exec ${valgrind} < "$t"`,
        "",
      ].join("\n"),
    );
  }
  chmodSync(path, 0o755);
  return path;
}

/** The pid of the valgrind process running workerd (its comm is valgrind's, not workerd's). */
export function valgrindPid(dir) {
  return Number(execFileSync("pgrep", ["-n", "-f", `callgrind-out-file=${dir}/`], { encoding: "utf8" }).trim());
}

/** Runs `work` with instrumentation on and returns the dump file it produced. */
export async function counted(pid, dir, work) {
  const control = (...args) => execFileSync("callgrind_control", [...args, String(pid)], { stdio: "ignore" });
  control("-z");
  control("-i", "on");
  try {
    await work();
  } finally {
    control("-i", "off");
  }
  control("-d");
  const dumps = readdirSync(dir)
    .filter((f) => f.startsWith(`cg.${pid}.`))
    .sort((a, b) => Number(a.split(".").pop()) - Number(b.split(".").pop()));
  return join(dir, dumps[dumps.length - 1] ?? "");
}

/**
 * Work that does not belong to a request's own code path and varies with timing: the garbage
 * collectors and allocator, finalizers and destructors, V8's platform tasks and compiler, the
 * microtask pump. Reported apart ("housekeeping"); the rest ("work") repeats to within a few per
 * cent from one run to the next.
 */
const HOUSEKEEPING =
  /~|Dispos|platform::|TimeTicks|clock_gettime|Mutex|detachWrapper|maybeDeferDestruction|CppgcShim|compiler::|Compil|Turbofan|Maglev|Deferred<|MicrotaskQueue|runMicrotasks|TryCatch|JobHandle|Refcounted|tcmalloc|cppgc|Sweep|Scaveng|MarkCompact|Heap::|heap::|GCTracer|Marking|Evacuat|Compactor|MemoryAllocator|PagedSpace|NewSpace|operator new|operator delete|malloc|free\b|madvise|munmap|mmap|Finaliz|WeakCallback|GlobalHandles|TracedHandles|Unmapper/;

/** Where a function's instructions go, for the comparison of two dumps. */
/** @type {[string, RegExp][]} */
export const CATEGORIES = [
  // SQLite's own JSON functions are json* in lower case; V8's JsonParser is in "JSON"
  ["SQLite", /sqlite|wal[A-Z]|pcache|btree|balance|Vdbe|memjrnl|subjournal|pager|(^|[^A-Za-z])json[A-Z]/],
  ["RPC serialization", /ValueSerializer|ValueDeserializer|Serializ/],
  ["JSON", /Json|JSON/],
  ["headers, HTTP", /Headers|Header|Http|normalizeHeader|strcaseeq/],
  ["URL", /ada::|URL|Url/],
  ["promises, async", /Promise|Microtask|AsyncFunction|Generator|Await/],
  ["interpreter, baseline code", /Interpreter|Handler$|Baseline|NoFeedback|Bytecode/],
  [
    "property access",
    /GetProperty|LookupIterator|PropertyKey|LoadIC|StoreIC|KeyedLoad|KeyedStore|DefineNamed|SetProperty|Transition|MigrateToMap/,
  ],
  ["strings", /String|Utf8|utf8|simdutf|CopyChars|unibrow/],
  [
    "objects, allocation",
    /Factory|Allocate|InitializeBody|JSObject::|HeapObject|NewInstance|Template|Wrappable|InternalField|SetAlignedPointer|JSFunctionBuilder|SharedFunctionInfo/,
  ],
  ["crypto", /sha256|SHA|aes|AES|EVP|digest|Crypto|crypto|HMAC|random|Random/],
  ["optimized JavaScript", /^\(JIT code\)$/],
  ["memory copies", /memcpy|memmove|memset|memcmp/],
  ["workerd, kj, capnp", /kj::|capnp|workerd::/],
];

/**
 * A dump's instructions by function (self cost), each divided by `per`: `{ total, work,
 * housekeeping, functions: Map<name, Ir> }`. Code V8 generated has no symbol: it is one entry.
 */
export function readDump(file, per) {
  const out = execFileSync("callgrind_annotate", ["--threshold=100", file], { encoding: "utf8", maxBuffer: 1 << 28 });
  const functions = new Map();
  let total = 0;
  let work = 0;
  let housekeeping = 0;
  for (const line of out.split("\n")) {
    const m = /^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$/.exec(line);
    if (!m) continue;
    const ir = Number(m[1].replace(/,/g, "")) / per;
    if (m[2].startsWith("PROGRAM TOTALS")) {
      total = ir;
      continue;
    }
    const name = m[2]
      .replace(/\s*\[.*\]$/, "")
      .replace(/^\?\?\?:0x[0-9a-f]+$/, "(JIT code)")
      .replace(/'\d+$/, "");
    if (HOUSEKEEPING.test(name)) housekeeping += ir;
    else {
      work += ir;
      functions.set(name, (functions.get(name) ?? 0) + ir);
    }
  }
  return { total, work, housekeeping, functions };
}

/** The work of two dumps by category: `[category, a, b][]`, largest difference first. */
export function byCategory(a, b) {
  const sum = (fns) => {
    const c = new Map();
    for (const [name, ir] of fns) {
      const cat = CATEGORIES.find(([, re]) => re.test(name))?.[0] ?? "other";
      c.set(cat, (c.get(cat) ?? 0) + ir);
    }
    return c;
  };
  const ca = sum(a.functions);
  const cb = sum(b.functions);
  return [...new Set([...ca.keys(), ...cb.keys()])]
    .map((k) => /** @type {[string, number, number]} */ ([k, ca.get(k) ?? 0, cb.get(k) ?? 0]))
    .sort((x, y) => Math.abs(y[2] - y[1]) - Math.abs(x[2] - x[1]));
}

/** The functions whose work differs most between two dumps: `[name, a, b][]`. */
export function byFunction(a, b, n) {
  return [...new Set([...a.functions.keys(), ...b.functions.keys()])]
    .map((k) => /** @type {[string, number, number]} */ ([k, a.functions.get(k) ?? 0, b.functions.get(k) ?? 0]))
    .sort((x, y) => Math.abs(y[2] - y[1]) - Math.abs(x[2] - x[1]))
    .slice(0, n);
}
