#!/usr/bin/env python3
"""A local stand-in for a hosted SMS verification API (the Twilio Verify v2 interface), for the
adapter tests of scripts/check-adapters. Nothing is sent: a started verification's code goes to
an in-memory outbox the test reads (the "phone").

The documented behaviour it follows:
- POST /v2/Services/SID/Verifications (To, Channel) starts a verification: 201, status pending.
  A send to the same number while its verification is pending (10 minutes) sends the same code
  again. At most 5 sends per number per 10 minutes: then 429 with error 60203.
- POST /v2/Services/SID/VerificationCheck (Code, and VerificationSid or To): 200 with status
  approved (the verification is then gone) or pending (a wrong code). 5 checks per verification:
  the 6th answers 429 with error 60202 and the verification is gone. A verification that is
  approved, expired (10 minutes) or out of checks answers 404 (error 20404).
- HTTP basic auth with the account SID and token given on the command line: else 401 (20003).

Test controls (not part of the service):
  POST /_control/advance?seconds=N   moves the stand-in's clock forward
  POST /_control/next-code?code=D    the code of the next new verification
  POST /_control/stall?seconds=N     the next requests wait N seconds before answering
  GET  /_control/outbox              the codes sent so far, one line each: "TO CODE"
  GET  /_control/checks              how each check named its verification, one line each:
                                     "VerificationSid" or "To"

  verify-standin.py --port-file FILE --account-sid AC... --auth-token TOKEN --service-sid VA...
"""
import argparse
import base64
import json
import os
import secrets
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LIFETIME = 600
MAX_CHECKS = 5
MAX_SENDS = 5
SEND_WINDOW = 600


class Service:
    def __init__(self, account, token, service):
        self.account, self.token, self.service = account, token, service
        self.lock = threading.Lock()
        self.offset = 0.0
        self.next_code = None
        self.stall = 0.0
        self.verifications = {}  # sid -> dict
        self.sends = {}  # to -> [times]
        self.outbox = []
        self.checks = []

    def now(self):
        return time.time() + self.offset

    def live(self, verification):
        return verification["status"] == "pending" and self.now() < verification["created"] + LIFETIME


def error(code, message, status):
    return status, {"code": code, "message": message, "more_info": f"https://www.twilio.com/docs/errors/{code}", "status": status}


def start(service, form):
    to, channel = form.get("To", ""), form.get("Channel", "")
    if not to or channel not in ("sms", "call", "email", "whatsapp"):
        return error(60200, "Invalid parameter", 400)
    now = service.now()
    recent = [t for t in service.sends.get(to, []) if now - t < SEND_WINDOW]
    if len(recent) >= MAX_SENDS:
        service.sends[to] = recent
        return error(60203, "Max send attempts reached", 429)
    service.sends[to] = recent + [now]
    verification = next((v for v in service.verifications.values() if v["to"] == to and service.live(v)), None)
    if verification is None:
        code = service.next_code or "".join(secrets.choice("0123456789") for _ in range(6))
        service.next_code = None
        sid = "VE" + secrets.token_hex(16)
        verification = {"sid": sid, "to": to, "code": code, "created": now, "checks": 0, "status": "pending"}
        service.verifications[sid] = verification
    service.outbox.append(f"{to} {verification['code']}")
    return 201, describe(service, verification)


def check(service, form):
    code = form.get("Code", "")
    service.checks.append("VerificationSid" if "VerificationSid" in form else "To")
    if "VerificationSid" in form:
        verification = service.verifications.get(form["VerificationSid"])
    else:
        verification = next((v for v in service.verifications.values() if v["to"] == form.get("To") and service.live(v)), None)
    if verification is None or not service.live(verification):
        return error(20404, "The requested resource was not found", 404)
    verification["checks"] += 1
    if verification["checks"] > MAX_CHECKS:
        verification["status"] = "max_attempts_reached"
        return error(60202, "Max check attempts reached", 429)
    if secrets.compare_digest(code.encode(), verification["code"].encode()):
        verification["status"] = "approved"
    return 200, describe(service, verification)


def describe(service, verification):
    return {"sid": verification["sid"], "service_sid": service.service, "account_sid": service.account,
            "to": verification["to"], "channel": "sms", "status": verification["status"],
            "valid": verification["status"] == "approved"}


def handler_for(service):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def reply(self, status, payload, content_type="application/json"):
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a stall longer than its time limit)

        def do_GET(self):
            lists = {"/_control/outbox": service.outbox, "/_control/checks": service.checks}
            path = urllib.parse.urlsplit(self.path).path
            if path in lists:
                with service.lock:
                    text = "".join(line + "\n" for line in lists[path])
                return self.reply(200, text.encode(), "text/plain")
            self.reply(*error(20404, "The requested resource was not found", 404))

        def do_POST(self):
            url = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(url.query))
            length = int(self.headers.get("Content-Length") or 0)
            form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
            if url.path.startswith("/_control/"):
                with service.lock:
                    if url.path == "/_control/advance":
                        service.offset += float(query["seconds"])
                    elif url.path == "/_control/next-code":
                        service.next_code = query["code"]
                    elif url.path == "/_control/stall":
                        service.stall = float(query["seconds"])
                    else:
                        return self.reply(404, b"no such control\n", "text/plain")
                return self.reply(200, b"ok\n", "text/plain")
            with service.lock:
                stall = service.stall
            if stall:
                time.sleep(stall)
            expected = "Basic " + base64.b64encode(f"{service.account}:{service.token}".encode()).decode()
            if self.headers.get("Authorization") != expected:
                return self.reply(*error(20003, "Authenticate", 401))
            prefix = f"/v2/Services/{service.service}/"
            with service.lock:
                if url.path == prefix + "Verifications":
                    return self.reply(*start(service, form))
                if url.path == prefix + "VerificationCheck":
                    return self.reply(*check(service, form))
            self.reply(*error(20404, "The requested resource was not found", 404))

    return Handler


def main():
    parser = argparse.ArgumentParser(description="stand-in for a hosted SMS verification API")
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--account-sid", required=True)
    parser.add_argument("--auth-token", required=True)
    parser.add_argument("--service-sid", required=True)
    arguments = parser.parse_args()
    service = Service(arguments.account_sid, arguments.auth_token, arguments.service_sid)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(service))
    with open(arguments.port_file + ".tmp", "w") as file:
        file.write(f"{server.server_address[1]}\n")
    os.rename(arguments.port_file + ".tmp", arguments.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
