-- The service's signing keys (docs/oidc.md "Signing keys"): ES256 key pairs it generates itself,
-- the private half sealed with SEAL_KEY. A key is published in the JWKS from its creation and signs
-- from `signs_from`; it stops signing when a newer key's `signs_from` comes, and stays published until
-- everything it signed has expired. Both times are derived from the rows (workers/provider/store/signing-keys.ts),
-- so a rotation is one insert.
CREATE TABLE signing_keys (
  kid            TEXT PRIMARY KEY,
  alg            TEXT NOT NULL,          -- 'ES256'
  public_jwk     TEXT NOT NULL,          -- JSON: kty, crv, x, y
  private_sealed TEXT NOT NULL,          -- the private JWK (JSON), sealed with SEAL_KEY
  created_at     INTEGER NOT NULL,       -- epoch ms: published from here
  signs_from     INTEGER NOT NULL,       -- epoch ms: signs from here (the first key at once)
  created_by     TEXT NOT NULL           -- 'service' (the first key) or the operator who rotated
);
CREATE INDEX signing_keys_by_start ON signing_keys (signs_from);
