#!/usr/bin/env node
// `npm run admin -- <command>`: the operator's command line over the admin API (docs/operations.md).
// Plain Node (>= 20), no build step, no dependencies. With no options it talks to the local dev
// server of `npm start` with the dev admin token from .dev.vars; --base-url (or BASE_URL) and
// ADMIN_TOKEN point it at a deployed service.
import { createHash } from "node:crypto";
import { createWriteStream, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  DEFAULT_CHUNK_ROWS,
  DEFAULT_PARALLEL,
  formatOf,
  importFile,
  intOption,
  SERVER_MAX_BYTES,
  SERVER_MAX_ROWS,
} from "./lib/directory-import.mjs";
import { CliError, ServiceError, UsageError } from "./lib/errors.mjs";
import { DEFAULT_EVENT_TYPES, EVENT_TYPES as EVENT_TYPE_LIST } from "../workers/core/event-types.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const DEFAULT_BASE = "http://localhost:8787";
const ITEMS = ["ci", "phoneNo", "name", "gender", "agegroup", "birthday", "birthdate", "foreign", "telcoCd"];
/** The signed event types a client can take (docs/events.md): the service's own list, which it checks names against. */
const EVENT_TYPES = EVENT_TYPE_LIST.join(",");

// ---------------------------------------------------------------- commands

const GLOBAL_HELP = `Global options:
  --base-url URL   the service (default: BASE_URL, else http://localhost:PORT when PORT is set as
                   for npm start, else ${DEFAULT_BASE}, the npm start server); printed on stderr
  --json           machine-readable JSON on stdout instead of tables
  --help           help for any command
Environment:
  ADMIN_TOKEN      the admin bearer token; when unset and the service is on localhost,
                   ADMIN_TOKEN from .dev.vars (or .dev.vars.example) is used
  BASE_URL         as --base-url
  PORT             the port of a local npm start server (when BASE_URL is unset)`;

const COMMANDS = {
  "clients list": {
    usage: "clients list",
    about: "List registered clients (never their secrets).",
    options: {},
    run: async (api) => {
      const { clients } = await api("GET", "/admin/clients");
      return {
        data: { clients },
        table: () =>
          table(clients.map(clientRow), ["client_id", "name", "status", "auto_login", "items", "redirect_uris"]),
      };
    },
  },
  "clients get": {
    usage: "clients get <client_id>",
    about: "Show one client (never its secret).",
    args: ["client_id"],
    options: {},
    run: async (api, { args }) => {
      const c = await api("GET", `/admin/clients/${enc(args.client_id)}`);
      return { data: c, table: () => keyValues(shownClient(c)) };
    },
  },
  "clients create": {
    usage:
      "clients create --name NAME --redirect-uri URI [--redirect-uri URI ...] [--items a,b,c] [--auto-login] [--oidc] [--events-uri URI] [--event-types a,b] [--purpose TEXT] [--retention TEXT] [--sms-daily-budget N]",
    about: "Register a client. Prints client_id and client_secret: the secret is shown only this once.",
    options: {
      name: { value: true, help: "the app's name shown on the consent page" },
      "redirect-uri": {
        value: true,
        repeat: true,
        help: "a callback address (https, http on loopback, or an app scheme); repeat for more",
      },
      items: { value: true, help: `agreed items, comma-separated: ${ITEMS.join(",")} (default none)` },
      "auto-login": { help: "allow automatic login" },
      oidc: { help: "OpenID Connect on: an openid request gets an id_token (docs/oidc.md)" },
      "events-uri": { value: true, help: "where signed events about the app's users go (https; docs/events.md)" },
      "event-types": {
        value: true,
        help: `the event types it takes, comma-separated: ${EVENT_TYPES} (default ${DEFAULT_EVENT_TYPES.join(",")})`,
      },
      purpose: { value: true, help: "the consent page's purpose of use (default: identifying and logging in)" },
      retention: { value: true, help: "the consent page's retention period (default: until the login ends)" },
      "sms-daily-budget": {
        value: true,
        help: "messages the app's sign-ins may send a day in Korea, 1 to 10000000 (default: SMS_APP_DAILY_BUDGET)",
      },
    },
    run: async (api, { opts }) => {
      if (opts.name === undefined) throw new UsageError("--name is required");
      if (!opts["redirect-uri"]?.length) throw new UsageError("--redirect-uri is required");
      const body = {
        name: opts.name,
        redirect_uris: opts["redirect-uri"],
        items: opts.items === undefined ? [] : list(opts.items),
        auto_login: Boolean(opts["auto-login"]),
        ...(opts.oidc ? { oidc: true } : {}),
        ...(opts["events-uri"] !== undefined ? { events_uri: opts["events-uri"] } : {}),
        ...(opts["event-types"] !== undefined ? { event_types: list(opts["event-types"]) } : {}),
        ...(opts.purpose !== undefined ? { purpose: opts.purpose } : {}),
        ...(opts.retention !== undefined ? { retention: opts.retention } : {}),
        ...(opts["sms-daily-budget"] !== undefined
          ? { sms_daily_budget: smsBudget(opts["sms-daily-budget"], false) }
          : {}),
      };
      const c = await api("POST", "/admin/clients", body);
      return {
        data: c,
        table: () => keyValues(shownClient(c)) + "\nSave the client_secret now: it is not shown again.",
      };
    },
  },
  "clients update": {
    usage:
      "clients update <client_id> [--name NAME] [--redirect-uri URI ...] [--items a,b,c] [--auto-login | --no-auto-login] [--oidc | --no-oidc] [--events-uri URI|none] [--event-types a,b] [--purpose TEXT|default] [--retention TEXT|default] [--sms-daily-budget N|default]",
    about: "Change a client. --redirect-uri and --items replace the whole list.",
    args: ["client_id"],
    options: {
      name: { value: true, help: "new name" },
      "redirect-uri": { value: true, repeat: true, help: "the new list of callback addresses (repeat)" },
      items: { value: true, help: `the new agreed items, comma-separated ("" for none): ${ITEMS.join(",")}` },
      "auto-login": { help: "allow automatic login" },
      "no-auto-login": { help: "do not allow automatic login" },
      oidc: { help: "OpenID Connect on (docs/oidc.md)" },
      "no-oidc": { help: "OpenID Connect off" },
      "events-uri": { value: true, help: 'where signed events go (https), or "none" to stop them' },
      "event-types": { value: true, help: `the event types it takes, comma-separated ("" for none): ${EVENT_TYPES}` },
      purpose: { value: true, help: 'the consent page\'s purpose of use, or "default"' },
      retention: { value: true, help: 'the consent page\'s retention period, or "default"' },
      "sms-daily-budget": {
        value: true,
        help: 'messages the app\'s sign-ins may send a day in Korea (1 to 10000000), or "default" for SMS_APP_DAILY_BUDGET',
      },
    },
    run: async (api, { args, opts }) => {
      const body = {};
      if (opts.name !== undefined) body.name = opts.name;
      if (opts["redirect-uri"]) body.redirect_uris = opts["redirect-uri"];
      if (opts.items !== undefined) body.items = list(opts.items);
      if (opts["auto-login"] && opts["no-auto-login"])
        throw new UsageError("--auto-login and --no-auto-login exclude each other");
      if (opts["auto-login"]) body.auto_login = true;
      if (opts["no-auto-login"]) body.auto_login = false;
      if (opts.oidc && opts["no-oidc"]) throw new UsageError("--oidc and --no-oidc exclude each other");
      if (opts.oidc) body.oidc = true;
      if (opts["no-oidc"]) body.oidc = false;
      if (opts["events-uri"] !== undefined) body.events_uri = opts["events-uri"] === "none" ? null : opts["events-uri"];
      if (opts["event-types"] !== undefined) body.event_types = list(opts["event-types"]);
      if (opts.purpose !== undefined) body.purpose = opts.purpose === "default" ? null : opts.purpose;
      if (opts.retention !== undefined) body.retention = opts.retention === "default" ? null : opts.retention;
      if (opts["sms-daily-budget"] !== undefined) body.sms_daily_budget = smsBudget(opts["sms-daily-budget"], true);
      if (Object.keys(body).length === 0)
        throw new UsageError(
          "nothing to change: give --name, --redirect-uri, --items, --[no-]auto-login, --[no-]oidc, --events-uri, --event-types, --purpose, --retention or --sms-daily-budget",
        );
      const c = await api("PATCH", `/admin/clients/${enc(args.client_id)}`, body);
      return { data: c, table: () => keyValues(shownClient(c)) };
    },
  },
  "clients rotate-secret": {
    usage: "clients rotate-secret <client_id> [--grace SECONDS]",
    about:
      "Issue a new secret (shown once); the old one keeps working for a grace period.\n" +
      "The grace (server default 24 h, SECRET_ROTATION_GRACE_SECONDS) lets the app be redeployed with the new\n" +
      "secret; --grace 0 ends the old one at once (a leaked secret).",
    args: ["client_id"],
    options: { grace: { value: true, help: "seconds the old secret keeps working (0 to 2592000)" } },
    run: async (api, { args, opts }) => {
      const body = {};
      if (opts.grace !== undefined) {
        if (!/^\d+$/.test(opts.grace)) throw new UsageError("--grace must be a whole number of seconds");
        body.grace_seconds = Number(opts.grace);
      }
      const c = await api("POST", `/admin/clients/${enc(args.client_id)}/rotate-secret`, body);
      const note = c.previous_secret_valid_until
        ? `The old secret works until ${c.previous_secret_valid_until}.`
        : "The old secret no longer works.";
      return { data: c, table: () => keyValues(c) + `\nSave the client_secret now: it is not shown again. ${note}` };
    },
  },
  "clients disable": {
    usage: "clients disable <client_id>",
    about: "Refuse the client everywhere (sign-in, token, user/me, disconnect); it is kept and can be enabled.",
    args: ["client_id"],
    options: {},
    run: async (api, { args }) => {
      const c = await api("POST", `/admin/clients/${enc(args.client_id)}/disable`);
      return { data: c, table: () => keyValues(c) };
    },
  },
  "clients enable": {
    usage: "clients enable <client_id>",
    about: "Accept a disabled client again.",
    args: ["client_id"],
    options: {},
    run: async (api, { args }) => {
      const c = await api("POST", `/admin/clients/${enc(args.client_id)}/enable`);
      return { data: c, table: () => keyValues(c) };
    },
  },
  "clients delete": {
    usage: "clients delete <client_id> --yes",
    about: "Delete a client with its users' plids and automatic-login grants. Cannot be undone.",
    args: ["client_id"],
    options: { yes: { help: "confirm the deletion" } },
    run: async (api, { args, opts }) => {
      if (!opts.yes) throw new UsageError("deleting a client cannot be undone: add --yes");
      const r = await api("DELETE", `/admin/clients/${enc(args.client_id)}`);
      return { data: r, table: () => `deleted client ${r.client_id}` };
    },
  },
  "directory import": {
    usage:
      "directory import <file.csv|file.ndjson|file.json> [--dry-run] [--format csv|ndjson|json] [--chunk-size N] [--parallel N] [--state PATH] [--restart] [--quiet]",
    about:
      "Import carrier-directory subscribers (new phone numbers are added, known ones updated).\n" +
      "CSV: a header row with telcoCd,phoneNo,name,gender,birth,foreign,ci. NDJSON (.ndjson, .jsonl): one such object\n" +
      "per line. Both are streamed, in chunks of rows, one request each; after each chunk the rows done are recorded\n" +
      "in <file>.import-state.json, and an interrupted import run again resumes there. JSON (.json): one array, sent\n" +
      `whole (at most ${SERVER_MAX_ROWS} rows). Rejected rows are listed by row number in the file (1 = the first row\n` +
      "after the header, or the first line) and reason. Progress goes to stderr.",
    args: ["file"],
    options: {
      "dry-run": { help: "validate and count only, chunk by chunk; write nothing" },
      format: { value: true, help: "csv, ndjson or json (default: from the file extension)" },
      "chunk-size": { value: true, help: `rows per request, 1-${SERVER_MAX_ROWS} (default ${DEFAULT_CHUNK_ROWS})` },
      "chunk-bytes": {
        value: true,
        help: `most bytes per request (default ${SERVER_MAX_BYTES}: the service's default ADMIN_MAX_IMPORT_BYTES)`,
      },
      parallel: { value: true, help: `chunks in flight at once, 1-16 (default ${DEFAULT_PARALLEL})` },
      state: {
        value: true,
        help: "the state file (default <file>.import-state.json; a dry run's .dry-run-state.json)",
      },
      restart: { help: "import from the first row, ignoring (and replacing) the state file" },
      quiet: { help: "no progress on stderr" },
    },
    run: async (api, { args, opts, ctx }) => {
      const dryRun = Boolean(opts["dry-run"]);
      const job = {
        file: args.file,
        format: formatOf(args.file, opts.format),
        dryRun,
        chunkRows: intOption(opts["chunk-size"], "chunk-size", DEFAULT_CHUNK_ROWS, 1, SERVER_MAX_ROWS),
        chunkBytes: intOption(opts["chunk-bytes"], "chunk-bytes", SERVER_MAX_BYTES, 1024, 50 * 1024 * 1024),
        parallel: intOption(opts.parallel, "parallel", DEFAULT_PARALLEL, 1, 16),
        statePath: opts.state ?? `${args.file}.${dryRun ? "dry-run" : "import"}-state.json`,
        restart: Boolean(opts.restart),
        quiet: Boolean(opts.quiet),
      };
      const r = await importFile(job, { api, ...ctx });
      if (r.rejected_count > 0 && !job.quiet)
        ctx.err.write(`${r.rejected_count} rows rejected: exit code 3 (the rest ${dryRun ? "checked" : "imported"})\n`);
      return {
        // finished, with rows refused: 3, so a script tells it from an import that stopped (1)
        exitCode: r.rejected_count > 0 ? 3 : 0,
        data: r,
        table: () => {
          let out = `${r.dry_run ? "dry run (nothing written): " : ""}${r.received} rows received, ${r.inserted} new, ${r.updated} updated, ${r.rejected_count} rejected`;
          if (r.chunks > 1 || r.resumed_at_row !== null)
            out += `\nin ${r.chunks} chunks${r.resumed_at_row !== null ? `, resumed at row ${r.resumed_at_row} (the counts include the earlier run's)` : ""}`;
          if (r.reassigned)
            out += `\n${r.reassigned} numbers reassigned to another person: the previous owners' logins ended`;
          if (r.ignored_columns.length) out += `\nignored columns: ${r.ignored_columns.join(", ")}`;
          if (r.rejected.length) out += "\n\n" + table(r.rejected, ["row", "reason"]);
          if (r.rejected_count > r.rejected.length)
            out += `\n(${r.rejected_count - r.rejected.length} more rejected rows not listed)`;
          return out;
        },
      };
    },
  },
  "directory delete": {
    usage: "directory delete <phone> --yes",
    about: "Delete one subscriber (with their plids and automatic-login grants) by phone number.",
    args: ["phone"],
    options: { yes: { help: "confirm the deletion" } },
    run: async (api, { args, opts }) => {
      if (!opts.yes) throw new UsageError("deleting a subscriber cannot be undone: add --yes");
      const r = await api("DELETE", `/admin/directory/${enc(args.phone)}`);
      return { data: r, table: () => "deleted" };
    },
  },
  migrate: {
    usage: "migrate [--batch N] [--state PATH] [--restart]",
    about:
      "Move a deployment of the single-database layout to the directory shards and the R2 audit trail:\n" +
      "people with their links (plids kept), then the audit events, a batch at a time. Every batch is\n" +
      "idempotent: run the same command again after an interruption and it resumes where the last\n" +
      "answered batch ended (--restart starts over, also safe). Automatic-login grants are not moved.",
    options: {
      batch: { value: true, help: "rows per request (default 500, at most 2000)" },
      state: { value: true, help: "where the progress is kept (default migrate-state.json here)" },
      restart: { help: "start from the first row, ignoring the state" },
    },
    run: async (api, { opts, io }) => {
      const batch = opts.batch === undefined ? 500 : Number(opts.batch);
      if (!Number.isInteger(batch) || batch < 1 || batch > 2000)
        throw new UsageError("--batch must be a whole number from 1 to 2000");
      const statePath = opts.state ?? "migrate-state.json";
      const fresh = { directory_after: 0, audit_after: 0, people: 0, links: 0, grants_not_moved: 0, events: 0 };
      let state = fresh;
      if (!opts.restart && existsSync(statePath)) {
        state = { ...fresh, ...JSON.parse(readFileSync(statePath, "utf8")) };
        io.err.write(`migrate: resuming (state: ${statePath})\n`);
      }
      const save = () => writeFileSync(statePath, JSON.stringify(state, null, 2) + "\n");
      for (const part of /** @type {const} */ (["directory", "audit"])) {
        const key = part === "directory" ? "directory_after" : "audit_after";
        while (state[key] !== null) {
          const r = await api("POST", `/admin/migrate/${part}?after=${state[key]}&limit=${batch}`);
          if (part === "directory") {
            state.people += r.people;
            state.links += r.links;
            state.grants_not_moved += r.grants_not_moved;
          } else state.events += r.events;
          state[key] = r.next_after;
          save();
          io.err.write(
            part === "directory"
              ? `migrate: ${state.people} people, ${state.links} links moved\n`
              : `migrate: ${state.events} audit events moved\n`,
          );
        }
      }
      rmSync(statePath, { force: true });
      const data = {
        people: state.people,
        links: state.links,
        grants_not_moved: state.grants_not_moved,
        audit_events: state.events,
      };
      return { data, table: () => keyValues(data) };
    },
  },
  "directory stats": {
    usage: "directory stats",
    about: "How many subscribers (and test numbers) the directory holds.",
    options: {},
    run: async (api) => {
      const r = await api("GET", "/admin/directory");
      return { data: r, table: () => keyValues(r) };
    },
  },
  "test-numbers add": {
    usage:
      "test-numbers add --telco S|K|L --phone NUMBER --name NAME --code 123456 --client ID [--client ID ...] --expires ISO-DATE-TIME [--gender M|F] [--birth YYYY-MM-DD] [--foreign L|F] [--ci BASE64]",
    about:
      "Register a test number for app review: it signs in with its fixed code, only for the listed clients, until it expires; no SMS is sent.",
    options: {
      telco: { value: true, help: "carrier: S, K or L" },
      phone: { value: true, help: "the number, 010-1234-5678 or 01012345678" },
      name: { value: true, help: "the name the reviewer types" },
      code: { value: true, help: "the fixed 6-digit code the reviewer types" },
      client: { value: true, repeat: true, help: "a client id it may sign in to; repeat for more" },
      expires: { value: true, help: "when it stops working, ISO 8601 (within a year)" },
      gender: { value: true, help: "M or F (default M)" },
      birth: { value: true, help: "YYYY-MM-DD (default 1990-01-01)" },
      foreign: { value: true, help: "L or F (default L)" },
      ci: { value: true, help: "Base64 of 64 bytes (default: derived from the number)" },
    },
    run: async (api, { opts }) => {
      for (const o of ["telco", "phone", "name", "code", "expires"])
        if (opts[o] === undefined) throw new UsageError(`--${o} is required`);
      if (!opts.client?.length) throw new UsageError("--client is required");
      const phone = opts.phone.replace(/[-\s]/g, "");
      const body = {
        telcoCd: opts.telco,
        phoneNo: phone,
        name: opts.name,
        gender: opts.gender ?? "M",
        birth: opts.birth ?? "1990-01-01",
        foreign: opts.foreign ?? "L",
        ci: opts.ci ?? testCi(phone),
        code: opts.code,
        clients: opts.client,
        expiresAt: opts.expires,
      };
      const r = await api("POST", "/admin/test-numbers", body);
      return { data: r, table: () => keyValues({ ...r, clients: r.clients.join(", ") }) };
    },
  },
  "test-numbers list": {
    usage: "test-numbers list",
    about:
      "Registered test numbers: carrier, number, name, clients, expiry, wrong codes so far and whether it is suspended (never the code).",
    options: {},
    run: async (api) => {
      // every page (the service lists them 100 at a time, by number, across its shards)
      const all = [];
      let after = null;
      do {
        const page = await api("GET", "/admin/test-numbers" + (after ? `?after=${enc(after)}` : ""));
        all.push(...page.test_numbers);
        after = page.next_after;
      } while (after);
      const r = { test_numbers: all };
      return {
        data: r,
        table: () =>
          r.test_numbers.length
            ? table(
                r.test_numbers.map((t) => ({
                  ...t,
                  clients: t.clients.join(","),
                  status: t.suspended ? "SUSPENDED" : "active",
                })),
                ["telcoCd", "phoneNo", "name", "clients", "expires_at", "wrong_codes", "status"],
              )
            : "no test numbers",
      };
    },
  },
  "test-numbers remove": {
    usage: "test-numbers remove <phone>",
    about: "Remove a test number: its logins end as a subscriber's removal does.",
    args: ["phone"],
    options: {},
    run: async (api, { args }) => {
      const r = await api("DELETE", `/admin/test-numbers/${enc(args.phone)}`);
      return { data: r, table: () => "removed" };
    },
  },
  "operators grant": {
    usage: "operators grant --phone NUMBER --role viewer|editor|admin",
    about:
      "Invite the holder of a number to be an operator: the person who next signs in to /console with it\n" +
      "within 7 days takes the role, which is then theirs (it ends if the number passes to another person).\n" +
      "Fixed-code test numbers can never hold a role.",
    options: {
      phone: { value: true, help: "the mobile number (01056789012)" },
      role: {
        value: true,
        help: "viewer (reads everything), editor (also apps but their secrets and deletion, test numbers, imports) or admin (everything)",
      },
    },
    run: async (api, { opts }) => {
      need(opts, "phone", "role");
      const r = await api("POST", "/admin/operators", { phone: opts.phone, role: opts.role });
      return {
        data: r,
        table: () =>
          `invited ${r.masked} as ${r.role} until ${r.expires_at}: sign in at /console with that number to take it`,
      };
    },
  },
  "operators list": {
    usage: "operators list",
    about: "Operators (opaque id, role, masked number, last seen) and open invitations.",
    options: {},
    run: async (api) => {
      const r = await api("GET", "/admin/operators");
      return {
        data: r,
        table: () =>
          [
            r.operators.length
              ? table(r.operators, ["id", "role", "masked", "granted_by", "taken_at", "last_seen_at"])
              : "no operators",
            r.invites.length
              ? "invitations:\n" + table(r.invites, ["masked", "role", "granted_by", "expires_at"])
              : "no open invitations",
          ].join("\n"),
      };
    },
  },
  "operators revoke": {
    usage: "operators revoke (--id OPERATOR_ID | --phone NUMBER)",
    about: "End an operator's role (--id, from operators list), or withdraw a number's open invitation (--phone).",
    options: {
      id: { value: true, help: "the operator's id (op_...)" },
      phone: { value: true, help: "the invited number" },
    },
    run: async (api, { opts }) => {
      if ((opts.id === undefined) === (opts.phone === undefined)) throw new UsageError("give --id or --phone");
      const path =
        opts.id !== undefined ? `/admin/operators/${enc(opts.id)}` : `/admin/operators/invites/${enc(opts.phone)}`;
      await api("DELETE", path);
      return { data: { revoked: true }, table: () => (opts.id ? "role ended" : "invitation withdrawn") };
    },
  },
  "tokens create": {
    usage: "tokens create --name NAME --role viewer|editor|admin",
    about:
      "Create a named API token for automation. Prints the token: it is shown only this once. Use it as\n" +
      "ADMIN_TOKEN for this command line; the audit names its changes token:NAME.",
    options: {
      name: { value: true, help: "1-32 lowercase letters, digits or -" },
      role: {
        value: true,
        help: "viewer (reads everything), editor (also apps but their secrets and deletion, test numbers, imports) or admin (everything)",
      },
    },
    run: async (api, { opts }) => {
      need(opts, "name", "role");
      const r = await api("POST", "/admin/tokens", { name: opts.name, role: opts.role });
      return {
        data: r,
        table: () => `${keyValues(r)}\nThe token is shown only this once: store it in your secret manager now.`,
      };
    },
  },
  "tokens list": {
    usage: "tokens list",
    about: "API tokens: name, role, who made them, last use (never the token).",
    options: {},
    run: async (api) => {
      const r = await api("GET", "/admin/tokens");
      return {
        data: r,
        table: () =>
          r.tokens.length ? table(r.tokens, ["name", "role", "created_by", "created_at", "last_used_at"]) : "no tokens",
      };
    },
  },
  "tokens revoke": {
    usage: "tokens revoke <name>",
    about: "Revoke a token: refused everywhere within CLIENT_CACHE_SECONDS (10 s).",
    args: ["name"],
    options: {},
    run: async (api, { args }) => {
      await api("DELETE", `/admin/tokens/${enc(args.name)}`);
      return { data: { revoked: true }, table: () => "revoked" };
    },
  },
  "keys list": {
    usage: "keys list",
    about:
      "The service's signing keys (docs/oidc.md): kid, state (next, signing, retired), when each signs\n" +
      "from and until, and until when the JWKS publishes it. Never a private key.",
    options: {},
    run: async (api) => {
      const r = await api("GET", "/admin/keys");
      return {
        data: r,
        table: () => table(r.keys, ["kid", "state", "created_by", "signs_from", "signs_until", "published_until"]),
      };
    },
  },
  "keys rotate": {
    usage: "keys rotate",
    about:
      "Rotate the signing key: a new key is published now and signs once every verifier's cached\n" +
      "JWKS holds it (7 minutes); the old key stays published until what it signed has expired.\n" +
      "Refused while the previous rotation's key waits to sign.",
    options: {},
    run: async (api) => {
      const r = await api("POST", "/admin/keys/rotate", {});
      return { data: r, table: () => keyValues(r) };
    },
  },
  "events list": {
    usage: "events list",
    about: "Signed events to apps not yet delivered: client, reason, attempts, next try (never the plid).",
    options: {},
    run: async (api) => {
      const r = await api("GET", "/admin/events");
      return {
        data: r,
        table: () =>
          r.events.length
            ? table(
                r.events.map((e) => ({
                  ...e,
                  next_try: e.next_try ?? "(gave up)",
                  last_outcome: e.last_outcome ?? "",
                })),
                ["client_id", "reason", "attempts", "next_try", "created_at", "last_outcome"],
              )
            : "no undelivered events",
      };
    },
  },
  "audit list": {
    usage:
      "audit list [--limit N] [--before CURSOR] [--type TYPE] [--client-id ID] [--actor ACTOR] [--since TIME] [--until TIME]",
    about:
      "Audit events, newest first. --type takes an exact type or a prefix ending in '.' (client., signin.).\n" +
      "Events reach the list in batches, up to AUDIT_FLUSH_SECONDS (60 s) after they happen. A page that read\n" +
      "its share of the archive stops early, perhaps with no events: go on with the --before it prints.",
    options: {
      limit: { value: true, help: "events per page, 1-500 (default 50)" },
      before: { value: true, help: "go on from a previous page (the --before printed below its table)" },
      type: { value: true, help: "event type or prefix" },
      "client-id": { value: true, help: "only events of this client" },
      actor: { value: true, help: "only changes made by operator:<id>, token:<name> or developer:<id>" },
      since: { value: true, help: "only events at or after this ISO 8601 time (2026-05-01T09:00:00+09:00)" },
      until: { value: true, help: "only events before this ISO 8601 time" },
    },
    run: async (api, { opts }) => {
      const q = new URLSearchParams();
      for (const [opt, param] of [
        ["limit", "limit"],
        ["before", "before"],
        ["type", "type"],
        ["client-id", "client_id"],
        ["actor", "actor"],
        ["since", "since"],
        ["until", "until"],
      ]) {
        if (opts[opt] !== undefined) q.set(param, opts[opt]);
      }
      const r = await api("GET", "/admin/audit" + (q.size ? `?${q}` : ""));
      return {
        data: r,
        table: () => {
          const rows = r.events.map((e) => ({
            ...e,
            client_id: e.client_id ?? "",
            detail: e.detail
              ? Object.entries(e.detail)
                  .map(([k, v]) => `${k}=${v}`)
                  .join(" ")
              : "",
          }));
          let out = table(rows, ["id", "at", "type", "client_id", "outcome", "detail"]);
          if (r.next_before !== null) out += `\nnext page: --before ${r.next_before}`;
          return out;
        },
      };
    },
  },
  "audit export": {
    usage: "audit export --from TIME [--to TIME] [--out FILE]",
    about:
      "Audit events of a time range as NDJSON (one JSON object a line), oldest first, streamed to stdout or a\n" +
      "file. TIME is ISO 8601: 2026-05-01 (UTC midnight) or 2026-05-01T09:00:00+09:00. The range is [from, to);\n" +
      "a range longer than a day is fetched a day at a time. Nothing older than the service's\n" +
      "AUDIT_RETENTION_DAYS is returned.",
    options: {
      from: { value: true, help: "start of the range (included)" },
      to: { value: true, help: "end of the range (excluded; default now)" },
      out: { value: true, help: "write to FILE instead of stdout" },
    },
    run: async (_api, { opts, stream, io }) => {
      if (opts.from === undefined) throw new UsageError("--from is required");
      const from = isoTime(opts.from, "--from");
      const to = opts.to === undefined ? Date.now() : isoTime(opts.to, "--to");
      if (to <= from) throw new UsageError("--to must be later than --from");
      const file = opts.out === undefined ? null : createWriteStream(opts.out);
      file?.on("error", () => {}); // reported by the write that meets it
      const sink = file ?? io.out;
      let events = 0;
      try {
        for (let start = from; start < to; start += DAY_MS) {
          const end = Math.min(start + DAY_MS, to);
          const q = new URLSearchParams({ from: new Date(start).toISOString(), to: new Date(end).toISOString() });
          const res = await stream(`/admin/audit/export?${q}`);
          for await (const chunk of res.body) {
            for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) events++;
            await write(sink, chunk);
          }
        }
      } finally {
        if (file)
          await new Promise((resolve, reject) =>
            file.end((/** @type {Error | undefined} */ e) => (e ? reject(e) : resolve(undefined))),
          );
      }
      if (!file) return { printed: true };
      return { data: { events, file: opts.out }, table: () => `${events} events written to ${opts.out}` };
    },
  },
};

const DAY_MS = 86_400_000;
/** An ISO 8601 date, or a date and time with its offset (what the export endpoint accepts). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

function isoTime(text, option) {
  const ms = ISO_TIME.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms))
    throw new UsageError(
      `${option} must be an ISO 8601 date, or a date and time with its offset (2026-05-01T09:00:00+09:00)`,
    );
  return ms;
}

/** Writes a chunk, waiting while the stream's buffer is full. */
function write(sink, chunk) {
  return new Promise((resolve, reject) => {
    if (sink.write(chunk, (/** @type {Error | null | undefined} */ e) => (e ? reject(e) : undefined)))
      resolve(undefined);
    else sink.once("drain", () => resolve(undefined));
  });
}

// ---------------------------------------------------------------- output

const enc = encodeURIComponent;
/** A test number's synthetic `ci`: Base64 of the 64-byte SHA-512 of the number (canonical, stable). */
const testCi = (phone) => createHash("sha512").update(`test-number:${phone}`).digest("base64");
const list = (s) =>
  s
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);

/** Each named option must be given. */
function need(opts, ...names) {
  for (const n of names) if (opts[n] === undefined) throw new UsageError(`--${n} is required`);
}

/** --sms-daily-budget: a whole number of messages (the service checks its bounds), or "default" (null) where it may reset. */
function smsBudget(v, mayReset) {
  if (mayReset && v === "default") return null;
  if (!/^\d+$/.test(v))
    throw new UsageError(`--sms-daily-budget must be a whole number of messages${mayReset ? ' or "default"' : ""}`);
  return Number(v);
}

/** A client as `get`, `create` and `update` print it: no budget of its own shows as the default it takes. */
function shownClient(c) {
  return c.sms_daily_budget === null ? { ...c, sms_daily_budget: "default (SMS_APP_DAILY_BUDGET)" } : c;
}

function clientRow(c) {
  return {
    ...c,
    auto_login: c.auto_login ? "yes" : "no",
    items: c.items.join(","),
    redirect_uris: c.redirect_uris.join(" "),
  };
}

function cell(v) {
  if (v === null || v === undefined) return "";
  if (Array.isArray(v)) return v.join(", ");
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function table(rows, columns) {
  if (rows.length === 0) return "(none)";
  const cells = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  const line = (r) =>
    r
      .map((v, i) => v.padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  return [line(columns), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}

function keyValues(obj) {
  const keys = Object.keys(obj);
  const w = Math.max(...keys.map((k) => k.length));
  return keys.map((k) => `${k.padEnd(w)}  ${cell(obj[k])}`).join("\n");
}

// ---------------------------------------------------------------- arguments and help

/** Options that take a value, across every command (so `--name Shop` is read the same anywhere). */
const VALUE_OPTIONS = new Set([
  "base-url",
  ...Object.values(COMMANDS).flatMap((c) =>
    Object.entries(c.options)
      .filter(([, o]) => o.value)
      .map(([n]) => n),
  ),
]);

/**
 * The command words and the options in order (`node:util` parseArgs, tokens kept so that a
 * repeated option stays repeated). Options that take a value take the next argument, but never
 * one that is itself an option (`--name --json` is a usage error, not a name).
 * @param {string[]} argv
 * @returns {{ words: string[]; flags: { name: string; value: string | undefined }[] }}
 */
function parse(argv) {
  /** @type {Record<string, { type: "string" | "boolean"; multiple?: boolean }>} */
  const options = {};
  for (const name of VALUE_OPTIONS) options[name] = { type: "string", multiple: true };
  const { tokens } = parseArgs({ args: argv, options, strict: false, allowPositionals: true, tokens: true });
  const words = [];
  const flags = [];
  for (const t of tokens ?? []) {
    if (t.kind === "positional") words.push(t.value);
    else if (t.kind === "option" && !t.rawName.startsWith("--"))
      words.push(t.rawName); // only long options exist
    else if (t.kind === "option") {
      if (VALUE_OPTIONS.has(t.name) && (t.value === undefined || (!t.inlineValue && t.value.startsWith("--")))) {
        throw new UsageError(`--${t.name} needs a value`);
      }
      flags.push({ name: t.name, value: t.value });
    }
  }
  return { words, flags };
}

function commandHelp(name, spec) {
  const opts = Object.entries(spec.options).map(([o, s]) => `  --${o}${s.value ? " VALUE" : ""}`.padEnd(28) + s.help);
  return `Usage: npm run admin -- ${spec.usage}\n\n${spec.about}\n${opts.length ? "\nOptions:\n" + opts.join("\n") + "\n" : ""}\n${GLOBAL_HELP}\n`;
}

function overview(prefix) {
  const names = Object.keys(COMMANDS).filter((n) => !prefix || n.startsWith(prefix + " "));
  const w = Math.max(...names.map((n) => n.length));
  const lines = names.map((n) => `  ${n.padEnd(w)}  ${COMMANDS[n].about.split("\n")[0]}`);
  return `Usage: npm run admin -- <command> [options]\n\nCommands:\n${lines.join("\n")}\n\n${GLOBAL_HELP}\n\nRun any command with --help for its options.\n`;
}

/**
 * The words of an error answer that is not the service's JSON (a proxy's or the runtime's plain
 * text, such as wrangler dev's "Your worker restarted mid-request"), on one line and cut at 160
 * characters; none for an empty or HTML body.
 * @param {string} text
 */
export function plainWords(text) {
  const t = text.replace(/\s+/g, " ").trim();
  if (t === "" || t.startsWith("<")) return "";
  return t.length > 160 ? `${t.slice(0, 159)}…` : t;
}

/** Reads ADMIN_TOKEN from .dev.vars, or .dev.vars.example (the dev token npm start uses). */
function devToken() {
  for (const f of [".dev.vars", ".dev.vars.example"]) {
    const p = join(root, f);
    if (!existsSync(p)) continue;
    const m = /^ADMIN_TOKEN\s*=\s*"?([^"\r\n]*)"?\s*$/m.exec(readFileSync(p, "utf8"));
    if (m) return m[1];
  }
  return undefined;
}

function isLoopback(url) {
  return ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
}

/**
 * Runs one CLI invocation. `io` carries the environment, output streams and fetch, so the
 * command line can be driven in tests; the exit code is returned.
 */
export async function main(
  argv,
  io = { env: process.env, out: process.stdout, err: process.stderr, fetch: globalThis.fetch },
) {
  let parsed;
  try {
    parsed = parse(argv);
  } catch (e) {
    io.err.write(`error: ${/** @type {Error} */ (e).message}\n`);
    return 2;
  }
  const { words, flags } = parsed;
  const has = (n) => flags.some((f) => f.name === n);
  const name = words.slice(0, 2).join(" ");
  // own keys only: `constructor` or `toString` are not commands
  const spec = Object.hasOwn(COMMANDS, name) ? COMMANDS[/** @type {keyof typeof COMMANDS} */ (name)] : undefined;
  if (!spec) {
    const group = words[0];
    const known = group !== undefined && Object.keys(COMMANDS).some((n) => n.startsWith(group + " "));
    if (words.length === 0 || (known && words.length === 1)) {
      io.out.write(overview(known ? group : undefined));
      return has("help") ? 0 : 2;
    }
    io.err.write(`unknown command: ${words.join(" ")}\n\n${overview()}`);
    return 2;
  }
  if (has("help")) {
    io.out.write(commandHelp(name, spec));
    return 0;
  }
  const json = has("json");
  try {
    const global = { json: { value: false }, "base-url": { value: true }, help: { value: false } };
    const opts = {};
    for (const f of flags) {
      const own = (/** @type {Record<string, any>} */ table) =>
        Object.hasOwn(table, f.name) ? table[f.name] : undefined;
      const o = own(spec.options) ?? own(global);
      if (!o) throw new UsageError(`unknown option --${f.name}`);
      if (!o.value && f.value !== undefined) throw new UsageError(`--${f.name} takes no value`);
      if (o.repeat) (opts[f.name] ??= []).push(f.value);
      else opts[f.name] = f.value ?? true;
    }
    const rest = words.slice(2);
    const argNames = spec.args ?? [];
    if (rest.length !== argNames.length)
      throw new UsageError(
        argNames.length ? `expected ${argNames.map((a) => `<${a}>`).join(" ")}` : "this command takes no arguments",
      );
    const args = Object.fromEntries(argNames.map((a, i) => [a, rest[i]]));

    let base;
    try {
      base = new URL(
        opts["base-url"] ?? io.env.BASE_URL ?? (io.env.PORT ? `http://localhost:${io.env.PORT}` : DEFAULT_BASE),
      );
    } catch {
      throw new UsageError("--base-url (or BASE_URL, or PORT) is not a URL");
    }
    // which server answers, said where a script's output is not (another checkout's may be on 8787)
    if (!opts.quiet) io.err.write(`service: ${base.origin}\n`);
    const token = io.env.ADMIN_TOKEN || (isLoopback(base) ? devToken() : undefined);
    if (!token) throw new UsageError(`set ADMIN_TOKEN to the admin token of ${base.origin}`);

    /** The operator's open notices an answer carries (docs/operations.md "Notices"), each printed once as a warning. */
    const warned = new Set();
    const warnNotices = (header) => {
      const texts = header ? parseJson(header) : undefined;
      if (!Array.isArray(texts)) return;
      for (const t of texts)
        if (typeof t === "string" && !warned.has(t)) {
          warned.add(t);
          io.err.write(`warning: ${t}\n`);
        }
    };
    /** The answer to a request, refused (a ServiceError with the service's message) unless 2xx. */
    const send = async (method, path, body, type = "application/json", signal) => {
      const headers = { Authorization: `Bearer ${token}`, Accept: "application/json" };
      if (body !== undefined) headers["Content-Type"] = type;
      let res;
      try {
        res = await io.fetch(new URL(path, base), {
          method,
          headers,
          body:
            body === undefined
              ? undefined
              : typeof body === "string" || body instanceof Uint8Array
                ? /** @type {BodyInit} */ (body)
                : JSON.stringify(body),
          signal,
        });
      } catch (e) {
        const err = /** @type {Error & { cause?: { code?: string } }} */ (e);
        const hint = isLoopback(base) ? " (is `npm start` running?)" : "";
        throw new ServiceError(`cannot reach ${base.origin}${hint}: ${err.cause?.code ?? err.message}`);
      }
      warnNotices(res.headers.get("Admin-Notices"));
      if (res.ok) return res;
      const text = await res.text().catch(() => "");
      const parsed = parseJson(text);
      const hint =
        res.status === 404 && parsed?.error === "not_found" && parsed.message.startsWith("The requested API")
          ? " (is ADMIN_TOKEN set on the service? without it /admin is absent)"
          : "";
      const err = new ServiceError(
        `${parsed?.message ?? (plainWords(text) || (text.trim() === "" ? "an empty answer" : "an answer that is not the service's JSON"))}${hint}`,
        res.status,
        parsed,
      );
      const after = Number(res.headers.get("Retry-After"));
      if (Number.isFinite(after) && after > 0) err.retryAfter = after;
      err.busy = res.headers.get("Admin-Busy") ?? undefined;
      throw err;
    };
    /** @type {import("./lib/directory-import.mjs").Api} */
    const api = async (method, path, body, type, signal) => {
      const res = await send(method, path, body, type, signal);
      let text;
      try {
        text = await res.text();
      } catch (e) {
        throw new ServiceError(`the answer from ${base.origin} broke off: ${/** @type {Error} */ (e).message}`);
      }
      const parsed = parseJson(text);
      if (parsed === undefined) throw new ServiceError(`unexpected answer (HTTP ${res.status}, not JSON)`, res.status);
      return parsed;
    };
    /** A GET whose body the command reads as a stream. */
    const stream = (path) => send("GET", path);

    const run =
      /** @type {(api: unknown, ctx: unknown) => Promise<{ data?: unknown; table?: () => string; printed?: boolean; exitCode?: number }>} */ (
        spec.run
      );
    const result = await run(api, { args, opts, stream, io, ctx: { origin: base.origin, env: io.env, err: io.err } });
    // a command that streamed its output has printed it already
    if (!result.printed) io.out.write((json ? JSON.stringify(result.data, null, 2) : (result.table?.() ?? "")) + "\n");
    return result.exitCode ?? 0;
  } catch (e) {
    if (e instanceof UsageError) {
      io.err.write(`error: ${e.message}\n\n${commandHelp(name, spec)}`);
      return 2;
    }
    if (e instanceof ServiceError) {
      if (json && e.body) io.out.write(JSON.stringify(e.body, null, 2) + "\n");
      io.err.write(`error: ${e.message}${e.status ? ` (HTTP ${e.status})` : ""}\n${e.hint ? e.hint + "\n" : ""}`);
      return 1;
    }
    if (e instanceof CliError) {
      io.err.write(`error: ${e.message}\n`);
      return e.exitCode;
    }
    throw e;
  }
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
