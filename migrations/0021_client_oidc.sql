-- OpenID Connect per client (docs/oidc.md): 1 sends an id_token beside the token response when the
-- authorization request's scope holds `openid`. Off for every client registered before it, so an
-- app whose library already sends scope=openid sees no change.
ALTER TABLE clients ADD COLUMN oidc INTEGER NOT NULL DEFAULT 0;
