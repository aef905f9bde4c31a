#!/usr/bin/python3
# A Shared Signals receiver written from the specs alone (OpenID SSF 1.0, RFC 8936 poll, RFC 8417
# SETs, RFC 9493 subject identifiers), with Debian's python3-authlib for the JOSE part: it reads the
# transmitter's configuration document, creates its app's poll stream with the app's own
# credentials (HTTP Basic, as the document's authorization_schemes say), asks for a verification
# event, and then polls, verifying every SET against the published JWKS before acknowledging it.
#
#   receiver.py setup BASE CLIENT_ID SECRET          -> {"stream_id", "events_delivered", "verification"}
#   receiver.py poll BASE CLIENT_ID SECRET STREAM COUNT -> [{"type", "event", "sub_id", "txn", "jti"}]
#   receiver.py push BASE CLIENT_ID SECRET STREAM COUNT -> {"ready": true} once its stream pushes
#       every supported type to its own loopback HTTP server (RFC 8935), then the COUNT SETs pushed to it, each verified
#       before it answers 202 (400 with RFC 8935's error body otherwise)
#
# Each prints one JSON document on stdout (push: two lines); any failure is an exception (exit code 1).
import base64
import http.server
import json
import secrets
import sys
import threading
import time
import urllib.error
import urllib.request

from authlib.jose import JsonWebKey, JsonWebToken

CAEP = "https://schemas.openid.net/secevent/caep/event-type/"
RISC = "https://schemas.openid.net/secevent/risc/event-type/"
VERIFICATION = "https://schemas.openid.net/secevent/ssf/event-type/verification"
POLL = "urn:ietf:rfc:8936"
PUSH = "urn:ietf:rfc:8935"


def call(method, url, auth=None, body=None):
    headers = {"Accept": "application/json"}
    data = None
    if auth:
        headers["Authorization"] = auth
    if body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            text = res.read().decode()
            return res.status, (json.loads(text) if text else None)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode() or "null")


def verified(token, conf, client_id):
    """The SET's claims, checked as SSF 1.0 and RFC 8417 ask; raises on anything else."""
    _, jwks = call("GET", conf["jwks_uri"])
    keys = JsonWebKey.import_key_set(jwks)
    claims = JsonWebToken(["ES256"]).decode(
        token,
        keys,
        claims_options={
            "iss": {"essential": True, "value": conf["issuer"]},
            "aud": {"essential": True, "value": client_id},
            "iat": {"essential": True},
            "jti": {"essential": True},
        },
    )
    claims.validate()
    if claims.header.get("typ") != "secevent+jwt":
        raise ValueError("typ is not secevent+jwt: %r" % claims.header.get("typ"))
    if claims.header.get("alg") != "ES256" or not claims.header.get("kid"):
        raise ValueError("not ES256 under a published kid")
    events = claims["events"]
    if len(events) != 1:
        raise ValueError("a SET carries one event here")
    sub_id = claims["sub_id"]
    if sub_id.get("format") == "opaque":
        if not isinstance(sub_id.get("id"), str):
            raise ValueError("opaque sub_id without an id")
    elif sub_id.get("format") == "iss_sub":
        if sub_id.get("iss") != conf["issuer"] or not isinstance(sub_id.get("sub"), str):
            raise ValueError("iss_sub sub_id not of this issuer")
    else:
        raise ValueError("sub_id format %r" % sub_id.get("format"))
    ((kind, event),) = events.items()
    return {"type": kind, "event": event, "sub_id": sub_id, "txn": claims.get("txn"), "jti": claims["jti"]}


def poll(conf, auth, client_id, endpoint, count, deadline=60):
    got, ack = [], []
    end = time.time() + deadline
    while len(got) < count:
        if time.time() > end:
            raise TimeoutError("%d of %d SETs after %d s" % (len(got), count, deadline))
        status, answer = call("POST", endpoint, auth, {"maxEvents": 10, "returnImmediately": False, "ack": ack})
        if status != 200:
            raise RuntimeError("poll answered %d: %r" % (status, answer))
        ack = []
        for jti, token in answer["sets"].items():
            s = verified(token, conf, client_id)
            if s["jti"] != jti:
                raise ValueError("the poll's key is not the SET's jti")
            got.append(s)
            ack.append(jti)
    if ack:
        call("POST", endpoint, auth, {"maxEvents": 0, "returnImmediately": True, "ack": ack})
    return got


def push(conf, auth, client_id, stream_id, count, deadline=60):
    """Switches the stream to push to a loopback server of its own; the COUNT SETs it is pushed."""
    secret = "Bearer " + secrets.token_urlsafe(24)
    got, failures = [], []
    done = threading.Event()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
            try:
                if self.headers.get("Authorization") != secret:
                    raise ValueError("not the stream's Authorization")
                if self.headers.get("Content-Type") != "application/secevent+jwt":
                    raise ValueError("not application/secevent+jwt")
                got.append(verified(body, conf, client_id))
                self.send_response(202)
                self.end_headers()
            except Exception as e:  # any failure to verify is the transmitter's, answered per RFC 8935
                failures.append(str(e))
                answer = json.dumps({"err": "invalid_request", "description": str(e)}).encode()
                self.send_response(400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
            if len(got) + len(failures) >= count:
                done.set()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = "http://127.0.0.1:%d/ssf" % server.server_address[1]
        status, stream = call("GET", conf["configuration_endpoint"] + "?stream_id=" + stream_id, auth)
        assert status == 200, (status, stream)
        status, stream = call(
            "PUT",
            conf["configuration_endpoint"],
            auth,
            {
                "stream_id": stream_id,
                "delivery": {"method": PUSH, "endpoint_url": url, "authorization_header": secret},
                # by push it takes every type the transmitter supports (SSF 1.0 §8.1.1 events_supported)
                "events_requested": stream["events_supported"],
                "description": "Python receiver, by push",
            },
        )
        assert status == 200 and stream["delivery"]["method"] == PUSH, (status, stream)
        print(json.dumps({"ready": True}), flush=True)
        if not done.wait(deadline):
            raise TimeoutError("%d of %d SETs after %d s" % (len(got), count, deadline))
        if failures:
            raise ValueError("SETs that did not verify: %r" % failures)
        return got
    finally:
        server.shutdown()


def main():
    verb, base, client_id, secret = sys.argv[1:5]
    auth = "Basic " + base64.b64encode(("%s:%s" % (client_id, secret)).encode()).decode()
    status, conf = call("GET", base + "/.well-known/ssf-configuration")
    assert status == 200, status
    assert POLL in conf["delivery_methods_supported"], conf
    assert "urn:ietf:rfc:7617" in [s.get("spec_urn") for s in conf["authorization_schemes"]], conf
    if verb == "setup":
        status, stream = call(
            "POST",
            conf["configuration_endpoint"],
            auth,
            {
                "delivery": {"method": POLL},
                "events_requested": [CAEP + "session-revoked", RISC + "account-purged", CAEP + "credential-change"],
                "description": "Python receiver",
            },
        )
        assert status == 201, (status, stream)
        status, _ = call("POST", conf["verification_endpoint"], auth, {"stream_id": stream["stream_id"], "state": "py-1"})
        assert status == 204, status
        (v,) = poll(conf, auth, client_id, stream["delivery"]["endpoint_url"], 1)
        assert v["type"] == VERIFICATION and v["event"].get("state") == "py-1", v
        print(json.dumps({"stream_id": stream["stream_id"], "events_delivered": stream["events_delivered"], "verification": v}))
    elif verb == "poll":
        stream_id, count = sys.argv[5], int(sys.argv[6])
        status, stream = call("GET", conf["configuration_endpoint"] + "?stream_id=" + stream_id, auth)
        assert status == 200, (status, stream)
        print(json.dumps(poll(conf, auth, client_id, stream["delivery"]["endpoint_url"], count)))
    elif verb == "push":
        stream_id, count = sys.argv[5], int(sys.argv[6])
        print(json.dumps(push(conf, auth, client_id, stream_id, count)))
    else:
        raise SystemExit("unknown verb " + verb)


main()
