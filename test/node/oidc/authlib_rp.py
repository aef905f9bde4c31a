# An OpenID Connect relying party on Python's Authlib (Debian's python3-authlib), driven by
# test/node/oidc-rp.browser.test.ts over stdin/stdout, one JSON object a line. From the issuer URL
# alone: discovery, an authorization URL with PKCE S256 and a nonce (Authlib's OAuth2Session), the
# code exchange with client_secret_basic, the id_token decoded and validated by Authlib's
# CodeIDToken (signature by the JWKS, iss, aud, exp, iat, nonce), and UserInfo.
#
# The JWKS is cached as long as its Cache-Control max-age allows and never fetched again on an
# unknown kid: the strictest verifier a key rotation must not fail.
#
#   in:  {"op": "start"}            out: {"authorize": "<url>"}
#   in:  {"op": "finish", "callback": "<url>"}
#                                   out: {"claims": {...}, "kid": "...", "id_token": "...", "userinfo": {...}}
#                                        or {"error": "..."}
import json
import os
import re
import sys
import time

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, jwt
from authlib.oidc.core import CodeIDToken

# Authlib refuses plain http unless told: the service under test is on loopback
os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"

conf = json.loads(sys.argv[1])
meta = requests.get(conf["issuer"] + "/.well-known/openid-configuration", timeout=10).json()
if meta["issuer"] != conf["issuer"]:
    raise SystemExit("discovery names another issuer: " + meta["issuer"])

jwks_cache = {"set": None, "until": 0.0}


def key_set():
    if jwks_cache["set"] is None or time.time() >= jwks_cache["until"]:
        res = requests.get(meta["jwks_uri"], timeout=10)
        m = re.search(r"max-age=(\d+)", res.headers.get("Cache-Control", ""))
        jwks_cache["set"] = JsonWebKey.import_key_set(res.json())
        jwks_cache["until"] = time.time() + (int(m.group(1)) if m else 0)
    return jwks_cache["set"]


def out(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


pending = {}
for line in sys.stdin:
    msg = json.loads(line)
    try:
        if msg["op"] == "start":
            client = OAuth2Session(
                conf["client_id"],
                conf["client_secret"],
                scope="openid",
                redirect_uri=conf["redirect_uri"],
                code_challenge_method="S256",
                token_endpoint_auth_method="client_secret_basic",
            )
            verifier = generate_token(48)
            nonce = generate_token(20)
            url, state = client.create_authorization_url(
                meta["authorization_endpoint"], code_verifier=verifier, nonce=nonce
            )
            pending.update(client=client, verifier=verifier, nonce=nonce, state=state)
            out({"authorize": url})
        elif msg["op"] == "finish":
            client = pending["client"]
            token = client.fetch_token(
                meta["token_endpoint"],
                authorization_response=msg["callback"],
                state=pending["state"],
                code_verifier=pending["verifier"],
            )
            claims = jwt.decode(
                token["id_token"],
                key_set(),
                claims_cls=CodeIDToken,
                claims_options={"iss": {"essential": True, "value": meta["issuer"]}},
                claims_params={"nonce": pending["nonce"], "client_id": conf["client_id"]},
            )
            claims.validate()
            header = json.loads(
                __import__("base64").urlsafe_b64decode(token["id_token"].split(".")[0] + "==").decode()
            )
            info = client.get(meta["userinfo_endpoint"], timeout=10)
            info.raise_for_status()
            out({"claims": dict(claims), "kid": header["kid"], "id_token": token["id_token"], "userinfo": info.json()})
        else:
            out({"error": "unknown op"})
    except Exception as e:  # reported to the test, which fails on it
        out({"error": type(e).__name__ + ": " + str(e)})
