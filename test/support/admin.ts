// Helpers for the admin API tests: authenticated calls through the all-in-one worker.

import { env } from "./env";
import { call } from "./helpers";

export const ADMIN_TOKEN = env.ADMIN_TOKEN as string;

/** An admin API call with the token (or `token: null` for none) and an optional JSON body. */
export function admin(
  method: string,
  path: string,
  opts: { json?: unknown; body?: string; type?: string; token?: string | null; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...opts.headers };
  const token = opts.token === undefined ? ADMIN_TOKEN : opts.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  let body: string | undefined = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers["Content-Type"] = "application/json";
  }
  if (opts.type) headers["Content-Type"] = opts.type;
  return call(path, { method, headers, body });
}

export interface CreatedClient {
  client_id: string;
  client_secret: string;
  name: string;
  redirect_uris: string[];
  items: string[];
  auto_login: boolean;
  status: string;
  previous_secret_valid_until: string | null;
}

/** Registers a client through the admin API; the answer includes the one-time secret. */
export async function createClient(fields: Record<string, unknown> = {}): Promise<CreatedClient> {
  const res = await admin("POST", "/admin/clients", {
    json: {
      name: "Test Shop",
      redirect_uris: ["https://shop.example/cb"],
      items: ["name", "phoneNo", "birthdate"],
      auto_login: true,
      ...fields,
    },
  });
  if (res.status !== 201) throw new Error(`create failed ${res.status} ${await res.text()}`);
  return (await res.json()) as CreatedClient;
}

/** The helpers' client shape for mintFor/tokenFor. */
export function asClient(c: CreatedClient) {
  return { clientId: c.client_id, redirectUris: c.redirect_uris, items: c.items as never[] };
}
