// The import graph the architecture test reads (test/node/architecture.test.ts): every edge a file
// has, a type-only import, a re-export, an import for effect and an import() in code or in a type
// included (a circle of types is a circle of concepts), and the circles of a graph.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** The .ts files under `dir`, at any depth. */
export function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** What `text` (of `file`) imports: project files (absolute, .ts), and modules as `bare:<name>`. */
export function edges(file: string, text: string): string[] {
  const specs = [
    // import (type) { … } from, import x from, export { … } from, export * from: across lines
    ...text.matchAll(/^[ \t]*(?:import|export)\b[^;]*?\bfrom\s+["']([^"']+)["']/gm),
    // import "x" (for its effects)
    ...text.matchAll(/^[ \t]*import\s+["']([^"']+)["']/gm),
    // import("x"), in code or in a type
    ...text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g),
  ].map((m) => m[1]!);
  return specs.map((s) => {
    if (!s.startsWith(".")) return `bare:${s}`;
    const p = resolve(dirname(file), s).replace(/\.js$/, "");
    return p.endsWith(".ts") ? p : `${p}.ts`;
  });
}

/** Each of `sources` with the files it imports. */
export function graphOf(sources: readonly string[]): Map<string, string[]> {
  return new Map(sources.map((f) => [f, edges(f, readFileSync(f, "utf8"))]));
}

/** The strongly connected components of more than one file, or a file importing itself (Tarjan). */
export function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** A source file's lines (a last newline ends the last line, it starts none). */
export function lineCount(file: string): number {
  return readFileSync(file, "utf8").replace(/\n$/, "").split("\n").length;
}
