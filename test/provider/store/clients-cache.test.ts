// The per-isolate client cache (workers/provider/store/clients.ts): a client's secrets are unsealed
// once and shared by concurrent readers; a failed unseal is not kept, so the next read tries again.
import { env } from "../../support/env";
import { expect, it } from "vitest";
import { clientSecrets } from "../../../workers/provider/store/clients";
import { createClient } from "../../support/admin";

it("secrets that fail to unseal are not cached; the next reads unseal once, together", async () => {
  const c = await createClient({ auto_login: false });
  // another valid 32-byte sealing key: the stored secret does not open under it (AES-GCM)
  const otherKey = { ...env, SEAL_KEY: btoa(String.fromCharCode(...new Uint8Array(32).fill(7))) };
  await expect(clientSecrets(otherKey, c.client_id, 60_000)).rejects.toThrow();
  const [a, b] = await Promise.all([clientSecrets(env, c.client_id, 60_000), clientSecrets(env, c.client_id, 60_000)]);
  expect(a?.current.secret).toBe(c.client_secret);
  expect(b).toBe(a);
  expect(await clientSecrets(env, c.client_id, 60_000)).toBe(a);
});
