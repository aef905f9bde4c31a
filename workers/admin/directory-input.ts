// Carrier-directory import files (docs/operations.md "Import formats"): CSV with a header row, or
// JSON (an array of objects, or {"subscribers": [...]}). Each row is validated on its own; a
// rejected row is reported by its number and a fixed reason, never by its content (personal data).

import { E } from "../core/errors";
import { parseCsv } from "./csv";
import {
  COLUMNS,
  kstToday,
  validateRow,
  type Column,
  type SubscriberInput,
  type SignalField,
} from "../provider/store/directory/index";

/** Accepted column (or JSON key) names, lower-cased, to the canonical one (a Map: no prototype keys). */
const ALIASES: ReadonlyMap<string, Column | SignalField> = new Map<string, Column | SignalField>([
  ["telcocd", "telcoCd"],
  ["telco", "telcoCd"],
  ["phoneno", "phoneNo"],
  ["phone", "phoneNo"],
  ["name", "name"],
  ["gender", "gender"],
  ["birth", "birth"],
  ["foreign", "foreign"],
  ["foreign_cd", "foreign"],
  ["ci", "ci"],
  // the carrier's risk signals, optional (store/directory/risk.ts)
  ["simchangedat", "simChangedAt"],
  ["sim_changed_at", "simChangedAt"],
  ["simchangekind", "simChangeKind"],
  ["sim_change_kind", "simChangeKind"],
  ["portedat", "portedAt"],
  ["ported_at", "portedAt"],
]);

export { parseCsv };

export interface Rejected {
  /** 1 = the first record after the CSV header, or the first element of the JSON array. */
  row: number;
  reason: string;
}

export interface ParsedImport {
  format: "csv" | "json";
  valid: SubscriberInput[];
  rejected: Rejected[];
  received: number;
  /** Column names that were not used (only names that look like column names are reported). */
  ignoredColumns: string[];
}

function reportableColumn(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_ -]{0,40}$/.test(name) ? name : "(unnamed column)";
}

/** A CSV record whose field count differs from the header's. */
class BadShape {
  constructor(
    readonly fields: number,
    readonly expected: number,
  ) {}
}

/** CSV records as objects keyed by the header's names (aliases are resolved with JSON keys). */
function rowsFromCsv(text: string): unknown[] {
  const records = parseCsv(text);
  const header = records.shift()?.map((h) => h.trim());
  if (!header) throw E.invalidBecause("file", "it has no header row");
  const known = new Set(header.map((h) => ALIASES.get(h.toLowerCase())));
  for (const col of COLUMNS) {
    if (!known.has(col))
      throw E.invalidBecause("file", `the header has no ${col} column (columns: ${COLUMNS.join(", ")})`);
  }
  return records.map((rec) =>
    rec.length === header.length
      ? Object.fromEntries(header.map((h, i) => [h, rec[i]]))
      : new BadShape(rec.length, header.length),
  );
}

function rowsFromJson(text: string): unknown[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw E.invalidBecause("file", "not JSON");
  }
  const list = Array.isArray(doc) ? doc : (doc as { subscribers?: unknown } | null)?.subscribers;
  if (!Array.isArray(list))
    throw E.invalidBecause("file", 'must be a JSON array of subscribers, or {"subscribers": [...]}');
  return list;
}

/** Parses and validates an import body. Whole-file problems throw 400; row problems are reported. */
export function parseImport(format: "csv" | "json", text: string, maxRows: number, now: number): ParsedImport {
  const ignored = new Set<string>();
  const rows = format === "csv" ? rowsFromCsv(text) : rowsFromJson(text);
  if (rows.length === 0) throw E.invalidBecause("file", "it has no rows");
  if (rows.length > maxRows)
    throw E.invalidBecause("file", `it has more than ${maxRows} rows (ADMIN_MAX_IMPORT_ROWS); split it`);

  const valid: SubscriberInput[] = [];
  const rejected: Rejected[] = [];
  const firstRowOfPhone = new Map<string, number>();
  const firstRowOfCi = new Map<string, number>();
  const today = kstToday(now);
  rows.forEach((raw, i) => {
    const row = i + 1;
    if (raw instanceof BadShape) {
      rejected.push({ row, reason: `row has ${raw.fields} fields; the header has ${raw.expected}` });
      return;
    }
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      rejected.push({ row, reason: "row must be an object" });
      return;
    }
    const mapped: Partial<Record<Column | SignalField, unknown>> = {};
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
      const col = ALIASES.get(k.toLowerCase());
      if (col) mapped[col] = v;
      else ignored.add(reportableColumn(k));
    }
    const result = validateRow(mapped, today, now);
    if (typeof result === "string") {
      rejected.push({ row, reason: result });
      return;
    }
    const first = firstRowOfPhone.get(result.phone);
    if (first !== undefined) {
      rejected.push({ row, reason: `phoneNo repeats row ${first}` });
      return;
    }
    // A ci is a person, and a person is one row (docs/account.md): a second row of one ci would
    // make which number the person keeps depend on the rows' order.
    const firstOfCi = firstRowOfCi.get(result.ci);
    if (firstOfCi !== undefined) {
      rejected.push({ row, reason: `ci repeats row ${firstOfCi}` });
      return;
    }
    firstRowOfPhone.set(result.phone, row);
    firstRowOfCi.set(result.ci, row);
    valid.push(result);
  });
  return { format, valid, rejected, received: rows.length, ignoredColumns: [...ignored] };
}
