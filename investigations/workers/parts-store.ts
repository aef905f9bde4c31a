// The one-time stores' own work inside their object (`node investigations/parts.mjs --only redeem,redeem-commit`):
// the project's store and the floor's, each minting `n` codes and then redeeming them inside the
// object, with no RPC per call, so the difference is the SQL and JavaScript of a redemption.
// `redeem/…` redeems in one synchronous loop (one implicit transaction); `redeem-commit/…` yields
// to the event loop before each redemption, so each commits on its own, as one per request does;
// `read-commit/…` reads tokens the same way (user/me's store step).
// `…-mint` parts mint only: subtract them. The project's parts include its audit flush (the count
// of the tokens issued, to R2), which a shard does once a flush interval. Compiled into the investigations' bundle only.

import { FloorStore, CLIENT } from "../../bench/workers/floor";
import { OneTimeStore } from "../../workers/all-in-one/index";
import type { TokenGrant } from "../../workers/provider/store/one-time/tables/codes";

/** Distinct random-looking 43-character values, as the SHA-256 digests the stores key by. */
const hashes = (n: number) =>
  Array.from({ length: n }, () => (crypto.randomUUID() + crypto.randomUUID()).replaceAll("-", "").slice(0, 43));

/** A turn of the event loop: the object's implicit transaction commits before the next write. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** The project's store with bench-only loops (the investigations' bundle exports it as OneTimeStore). */
export class PartsOneTimeStore extends OneTimeStore {
  async partsRedeem(grant: TokenGrant, n: number, spend: boolean, commitEach = false): Promise<number> {
    const codes = hashes(n);
    const tokens = hashes(n);
    for (const h of codes) this.putCode(h, grant, null, 600_000);
    if (!spend) return n;
    let won = 0;
    for (let i = 0; i < n; i++) {
      if (commitEach) await tick(); // each redemption its own implicit transaction, as one per request
      const r = this.redeemCode(codes[i]!, grant.clientId, tokens[i]!, grant.secretId, 600_000, null, null);
      if (r.ok) won++;
    }
    return won;
  }

  /** Mints `n` tokens (codes redeemed), then (`read`) reads each once, each read committing on its own. */
  async partsRead(grant: TokenGrant, n: number, read: boolean): Promise<number> {
    const codes = hashes(n);
    const tokens = hashes(n);
    for (const h of codes) this.putCode(h, grant, null, 600_000);
    for (let i = 0; i < n; i++)
      this.redeemCode(codes[i]!, grant.clientId, tokens[i]!, grant.secretId, 600_000, null, null);
    if (!read) return n;
    let got = 0;
    for (const t of tokens) {
      await tick();
      if (this.readToken(t, 1)) got++;
    }
    return got;
  }
}

/** The floor's store with the same loops. */
export class PartsFloorStore extends FloorStore {
  async partsRedeem(record: string, n: number, spend: boolean, commitEach = false): Promise<number> {
    const codes = hashes(n);
    const tokens = hashes(n);
    this.put(codes, [], record);
    if (!spend) return n;
    let won = 0;
    for (let i = 0; i < n; i++) {
      if (commitEach) await tick();
      if (this.redeem(codes[i]!, CLIENT, tokens[i]!)) won++;
    }
    return won;
  }

  async partsRead(record: string, n: number, read: boolean): Promise<number> {
    const tokens = hashes(n);
    this.put([], tokens, record);
    if (!read) return n;
    let got = 0;
    for (const t of tokens) {
      await tick();
      if (this.read(t) !== null) got++;
    }
    return got;
  }
}
