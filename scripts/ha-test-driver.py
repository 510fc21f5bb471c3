"""scripts/ha-test's driver: one Home Assistant release against the simulator, run by the release's
own venv python (it has aiohttp). Starts a private mosquitto and hass on 127.0.0.1 only, makes the
MQTT entry through the REST config flow, and checks through HA's REST and websocket API what a user
sees. Prints `ok   NAME` / `FAIL NAME` lines and returns the counts.

    python ha-test-driver.py --binary B --hass VENV/bin/hass --work DIR --version V --discovery device|entity
"""

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import time

import aiohttp

args = None
passed = 0
failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}", flush=True)
    else:
        failed += 1
        print(f"FAIL {name}" + (f": {detail}" if detail else ""), flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def until(predicate, limit, step=0.2):
    """Polls an async predicate until it is truthy or `limit` seconds pass; returns its last value."""
    end = time.monotonic() + limit
    value = None
    while time.monotonic() < end:
        value = await predicate()
        if value:
            return value
        await asyncio.sleep(step)
    return value


class HA:
    def __init__(self, work, port):
        self.work, self.port = work, port
        self.config = os.path.join(work, "ha")
        self.url = f"http://127.0.0.1:{port}"
        self.process = None
        self.token = None
        self.session = None

    def prepare(self, mqtt_port):
        os.makedirs(os.path.join(self.config, ".storage"), exist_ok=True)
        with open(os.path.join(self.config, "configuration.yaml"), "w") as f:
            f.write(
                "homeassistant:\n  name: ha-test\n  latitude: 0\n  longitude: 0\n  elevation: 0\n"
                "  unit_system: metric\n  time_zone: UTC\n"
                f"http:\n  server_host: 127.0.0.1\n  server_port: {self.port}\n"
                "api:\nconfig:\nhistory:\n"
                "recorder:\n  commit_interval: 1\n"
                "logger:\n  default: warning\n")
        # Recovery mode ignores configuration.yaml's http: and binds every interface unless the
        # stored settings say otherwise.
        with open(os.path.join(self.config, ".storage", "http"), "w") as f:
            json.dump({"version": 1, "minor_version": 1, "key": "http",
                       "data": {"server_host": ["127.0.0.1"], "server_port": self.port}}, f)

    def start(self):
        log = open(os.path.join(self.work, "hass.out"), "a")
        self.process = subprocess.Popen(
            [args.hass, "-c", self.config, "--skip-pip", "--log-no-color"], stdout=log, stderr=subprocess.STDOUT)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    async def up(self, limit=240):
        async def answers():
            try:
                async with self.session.get(self.url + "/api/onboarding", timeout=aiohttp.ClientTimeout(total=2)) as r:
                    return r.status in (200, 401)
            except Exception:
                return False
        return await until(answers, limit, 0.5)

    async def onboard(self):
        client = self.url + "/"
        async with self.session.post(self.url + "/api/onboarding/users", json={
                "client_id": client, "name": "Test", "username": "test", "password": "test-password-1", "language": "en"}) as r:
            code = (await r.json())["auth_code"]
        await self.login(code)

    async def login(self, code):
        async with self.session.post(self.url + "/auth/token", data={
                "grant_type": "authorization_code", "code": code, "client_id": self.url + "/"}) as r:
            tokens = await r.json()
        self.token = tokens["access_token"]
        self.refresh = tokens["refresh_token"]

    async def relogin(self):
        async with self.session.post(self.url + "/auth/token", data={
                "grant_type": "refresh_token", "refresh_token": self.refresh, "client_id": self.url + "/"}) as r:
            self.token = (await r.json())["access_token"]

    def headers(self):
        return {"Authorization": "Bearer " + self.token}

    async def get(self, path):
        async with self.session.get(self.url + path, headers=self.headers()) as r:
            return await r.json()

    async def post(self, path, body):
        async with self.session.post(self.url + path, headers=self.headers(), json=body) as r:
            return r.status, await r.json()

    async def ws(self, message):
        async with self.session.ws_connect(self.url + "/api/websocket") as ws:
            await ws.receive_json()
            await ws.send_json({"type": "auth", "access_token": self.token})
            await ws.receive_json()
            await ws.send_json(dict(message, id=1))
            while True:
                answer = await ws.receive_json()
                if answer.get("id") == 1:
                    return answer.get("result")

    async def state(self, entity_id):
        async with self.session.get(self.url + "/api/states/" + entity_id, headers=self.headers()) as r:
            return await r.json() if r.status == 200 else None


class Panel:
    def __init__(self, name, config, machine_id):
        self.name = name
        self.config = config
        self.machine_file = os.path.join(args.work, name + ".machine-id")
        with open(self.machine_file, "w") as f:
            f.write(machine_id + "\n")
        self.out = os.path.join(args.work, name + ".out")
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            [args.binary, "simulate", "--headless", "--realtime", "--events", "--config", self.config,
             "--machine-id-file", self.machine_file, "--mock-send", "ok@0.2", "--mock-verify", "reject@0.1",
             "--script", "end@900"],
            stdout=open(self.out, "a"), stderr=subprocess.STDOUT)

    def log(self):
        with open(self.out, errors="replace") as f:
            return f.read()

    def kill(self, sig=signal.SIGKILL):
        if self.process and self.process.poll() is None:
            self.process.send_signal(sig)


def panel_config(path, mqtt_port, discovery):
    with open(path, "w") as f:
        f.write("""{
  keypad: { enabled: true, verify: { command: ["/bin/false"] }, output: { line: "GPIO26", pulseMs: 500 },
            entry: { maxAttempts: 3 } },
  policy: { enabled: true, cooldowns: [10], maxSends: 5, windowSeconds: 3600 },
  mqtt: { enabled: true, host: "127.0.0.1", port: %d, keepaliveSeconds: 5, allowOpen: true,
          allowResetLockout: true, discovery: "%s" },
}
""" % (mqtt_port, discovery))


def app_id(machine):
    import hashlib
    import hmac
    d = bytearray(hmac.new(bytes.fromhex(machine), bytes.fromhex("485bab1f59064145bd57df4708eade73"), hashlib.sha256).digest()[:16])
    d[6] = (d[6] & 0x0F) | 0x40
    d[8] = (d[8] & 0x3F) | 0x80
    return d.hex()[:12]


# component, object, name, device_class, unit, entity_category
EXPECTED = [
    ("event", "event", "Event", None, None, None),
    ("button", "send", "Send code", None, None, None),
    ("button", "open", "Open door", None, None, None),
    ("button", "reset_lockout", "Reset lockout", None, None, "config"),
    ("sensor", "status", "Status", "enum", None, None),
    ("sensor", "seconds_left", "Seconds left", "duration", "s", None),
    ("binary_sensor", "lockout", "Lockout", None, None, None),
    ("sensor", "sends_left", "Sends left", None, None, None),
    ("sensor", "entry", "Entry", "enum", None, None),
    ("sensor", "attempts_left", "Attempts left", None, None, None),
    ("sensor", "lockout_seconds_left", "Lockout time left", "duration", "s", None),
    ("binary_sensor", "display", "Display", "connectivity", None, "diagnostic"),
]


async def main():
    global args
    parser = argparse.ArgumentParser()
    for name in ("--binary", "--hass", "--work", "--version", "--discovery"):
        parser.add_argument(name, required=True)
    parser.add_argument("--pair-seconds", type=float, default=60)
    args = parser.parse_args()
    tag = f"[{args.version}]"
    mqtt_port, http_port = free_port(), free_port()
    with open(os.path.join(args.work, "mosquitto.conf"), "w") as f:
        f.write(f"listener {mqtt_port} 127.0.0.1\nallow_anonymous true\npersistence false\nuser {os.getlogin() if False else subprocess.check_output(['id', '-un']).decode().strip()}\n")
    broker = subprocess.Popen(["mosquitto", "-c", os.path.join(args.work, "mosquitto.conf")],
                              stdout=open(os.path.join(args.work, "mosquitto.log"), "w"), stderr=subprocess.STDOUT)
    for _ in range(100):
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", mqtt_port)) == 0:
                break
        time.sleep(0.1)
    capture = subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(mqtt_port), "-V", "5", "--retain-as-published",
                                "-t", "#", "-F", "%r %t %p"], stdout=open(os.path.join(args.work, "capture.txt"), "w"),
                               stderr=subprocess.STDOUT)
    ha = HA(args.work, http_port)
    ha.prepare(mqtt_port)
    panels = []
    try:
        async with aiohttp.ClientSession() as session:
            ha.session = session
            started = time.monotonic()
            ha.start()
            check(f"{tag} hass answers on 127.0.0.1:{http_port}", await ha.up())
            print(f"     hass up after {time.monotonic() - started:.1f} s", flush=True)
            listening = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True).stdout
            check(f"{tag} hass listens on 127.0.0.1 only", f"127.0.0.1:{http_port}" in listening
                  and f"0.0.0.0:{http_port}" not in listening and f"*:{http_port}" not in listening and f"[::]:{http_port}" not in listening)
            await ha.onboard()
            status, flow = await ha.post("/api/config/config_entries/flow", {"handler": "mqtt"})
            step = flow
            if step.get("type") == "menu":
                status, step = await ha.post("/api/config/config_entries/flow/" + flow["flow_id"], {"next_step_id": "broker"})
            status, result = await ha.post("/api/config/config_entries/flow/" + flow["flow_id"], {"broker": "127.0.0.1", "port": mqtt_port})
            check(f"{tag} MQTT entry made through the REST config flow", result.get("type") == "create_entry", json.dumps(result)[:300])

            machine_a, machine_b = "11111111111111111111111111111111", "22222222222222222222222222222222"
            config_path = os.path.join(args.work, "panel.json5")
            panel_config(config_path, mqtt_port, args.discovery)
            a = Panel("panel-a", config_path, machine_a)
            panels.append(a)
            a.start()
            node = "resend-button_" + app_id(machine_a)
            host = socket.gethostname()

            async def device():
                devices = await ha.ws({"type": "config/device_registry/list"}) or []
                return next((d for d in devices if ["mqtt", node] in d.get("identifiers", [])), None)
            dev = await until(device, 30)
            check(f"{tag} one device for the panel", dev is not None)
            dev = dev or {}
            check(f"{tag} device name is the host name", dev.get("name") == host, str(dev.get("name")))
            check(f"{tag} device manufacturer, model, sw_version, hw_version",
                  dev.get("manufacturer") == "ResendButton" and dev.get("model") == "Resend button with keypad"
                  and dev.get("sw_version") == "0.1.0" and (dev.get("hw_version") or "").startswith("LCD 16x2"),
                  json.dumps({k: dev.get(k) for k in ("manufacturer", "model", "sw_version", "hw_version")}))

            async def entities():
                found = [e for e in (await ha.ws({"type": "config/entity_registry/list"}) or []) if e.get("device_id") == dev.get("id")]
                return found if len(found) >= len(EXPECTED) else None
            registry = await until(entities, 30) or []
            check(f"{tag} {len(EXPECTED)} entities on the device", len(registry) == len(EXPECTED), str(len(registry)))
            ids = {}
            for component, obj, name, device_class, unit, category in EXPECTED:
                entry = next((e for e in registry if e.get("unique_id") == f"{node}_{obj}"), None)
                if entry is None:
                    check(f"{tag} entity {name}", False, "missing")
                    continue
                ids[obj] = entry["entity_id"]
                state = await until(lambda: _available(ha, entry["entity_id"]), 15) or await ha.state(entry["entity_id"]) or {}
                attributes = state.get("attributes", {})
                problems = []
                if not entry["entity_id"].startswith(component + "."):
                    problems.append("component " + entry["entity_id"])
                if attributes.get("friendly_name") != f"{host} {name}":
                    problems.append(f"friendly_name {attributes.get('friendly_name')}")
                if attributes.get("device_class") != device_class:
                    problems.append(f"device_class {attributes.get('device_class')}")
                if attributes.get("unit_of_measurement") != unit:
                    problems.append(f"unit {attributes.get('unit_of_measurement')}")
                if entry.get("entity_category") != category:
                    problems.append(f"category {entry.get('entity_category')}")
                if state.get("state") == "unavailable":
                    problems.append("unavailable")
                check(f"{tag} entity {name}: {entry['entity_id']} {device_class or ''} {unit or ''} {category or ''}".rstrip(),
                      not problems, ", ".join(problems))
            status_state = await ha.state(ids.get("status", "sensor.none")) or {}
            entry = await ha.ws({"type": "config/entity_registry/get", "entity_id": ids.get("status", "sensor.none")}) or {}
            options = status_state.get("attributes", {}).get("options") or (entry.get("capabilities") or {}).get("options")
            # MQTT sensors take `options` from Home Assistant 2024.9 (home-assistant/core#123248);
            # an older release drops the key from the discovery (its schema removes extra keys), so
            # the enum sensor has no options there, whatever the device sends.
            release = tuple(int(part) for part in args.version.split(".")[:2])
            if release >= (2024, 9):
                check(f"{tag} Status options", options == ["ready", "sending", "cooldown", "failed", "locked_out", "stopped"], str(options))
            else:
                check(f"{tag} Status options: none (MQTT sensors take options from 2024.9)", options is None, str(options))
            check(f"{tag} Status ready, Sends left 5, Attempts left 3, Display on",
                  status_state.get("state") == "ready" and (await ha.state(ids.get("sends_left", "x")) or {}).get("state") == "5"
                  and (await ha.state(ids.get("attempts_left", "x")) or {}).get("state") == "3"
                  and (await ha.state(ids.get("display", "x")) or {}).get("state") == "on")

            # The button press starts the countdown; HA records it second by second.
            pressed_at = time.time()
            status, _ = await ha.post("/api/services/button/press", {"entity_id": ids.get("send")})
            check(f"{tag} pressing Send code (REST service call)", status == 200, str(status))
            cooldown = await until(lambda: _state_is(ha, ids.get("status"), "cooldown"), 10)
            check(f"{tag} the press starts the countdown (Status cooldown)", bool(cooldown))
            event_state = await until(lambda: _attribute_is(ha, ids.get("event"), "event_type", "code_sent"), 10)
            check(f"{tag} the Event entity shows code_sent", bool(event_state))
            await until(lambda: _state_is(ha, ids.get("status"), "ready"), 20)
            await asyncio.sleep(3)  # the recorder commits every second
            start = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(pressed_at - 1))
            history = await ha.get(f"/api/history/period/{start}?filter_entity_id={ids.get('seconds_left')}&minimal_response&no_attributes")
            points = [(p["state"], p.get("last_changed")) for p in (history[0] if history else [])]
            values = [s for s, _ in points]
            countdown = [str(n) for n in range(10, -1, -1)]
            check(f"{tag} HA's history recorded the countdown 10 9 ... 0", _subsequence(countdown, values), " ".join(values))
            stamps = []
            from datetime import datetime
            for value, changed in points:
                if value in countdown[1:-1] and changed:
                    stamps.append(datetime.fromisoformat(changed).timestamp())
            gaps = [b - a for a, b in zip(stamps, stamps[1:])]
            check(f"{tag} recorded seconds 0.9-1.1 s apart ({min(gaps, default=0):.2f}-{max(gaps, default=0):.2f} s)",
                  len(gaps) >= 8 and all(0.9 <= g <= 1.1 for g in gaps))

            # Open door and reset lockout through their buttons: events door_opened and lockout_finished.
            status, _ = await ha.post("/api/services/button/press", {"entity_id": ids.get("open")})
            opened = await until(lambda: _attribute_is(ha, ids.get("event"), "event_type", "door_opened"), 10)
            check(f"{tag} Open door: the event door_opened", bool(opened))

            # Availability: a hung process (SIGSTOP) and SIGKILL go unavailable through the last will.
            a.kill(signal.SIGSTOP)
            stopped_at = time.monotonic()
            hung = await until(lambda: _state_is(ha, ids.get("status"), "unavailable"), 20)
            check(f"{tag} a hung panel goes unavailable ({time.monotonic() - stopped_at:.1f} s, keepalive 5 s)", bool(hung))
            a.kill(signal.SIGCONT)
            back = await until(lambda: _state_not(ha, ids.get("status"), "unavailable"), 30)
            check(f"{tag} the panel running again is available again", bool(back))
            a.kill(signal.SIGKILL)
            a.process.wait()
            killed_at = time.monotonic()
            gone = await until(lambda: _state_is(ha, ids.get("status"), "unavailable"), 20)
            check(f"{tag} SIGKILL: unavailable ({time.monotonic() - killed_at:.1f} s)", bool(gone))

            # HA restarts with the retained discovery wiped: the panel republishes on homeassistant/status.
            a.start()
            await until(lambda: _state_not(ha, ids.get("status"), "unavailable"), 30)
            ha.stop()
            discovery_topics = [f"homeassistant/device/{node}/config"] + [f"homeassistant/{c}/{node}/{o}/config" for c, o, *_ in EXPECTED]
            for topic in discovery_topics:
                subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(mqtt_port), "-r", "-n", "-t", topic], check=True)
            ha.start()
            check(f"{tag} hass restarted", await ha.up())
            await ha.relogin()
            again = await until(lambda: _state_not(ha, ids.get("status"), "unavailable", missing_ok=False), 60)
            check(f"{tag} after the restart with discovery wiped: the entities are back and available", bool(again))
            retained = subprocess.run(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(mqtt_port), "-t", "homeassistant/#", "-W", "2",
                                       "-F", "%t %l"], capture_output=True, text=True).stdout
            expected_topic = (f"homeassistant/device/{node}/config" if args.discovery == "device"
                              else f"homeassistant/sensor/{node}/status/config")
            check(f"{tag} the discovery is retained on the broker again", any(
                line.startswith(expected_topic + " ") and not line.endswith(" 0") for line in retained.splitlines()))

            # Two panels with the same host name (and another machine id): two devices, both connected.
            b = Panel("panel-b", config_path, machine_b)
            panels.append(b)
            b.start()
            node_b = "resend-button_" + app_id(machine_b)

            async def both():
                devices = await ha.ws({"type": "config/device_registry/list"}) or []
                mine = [d for d in devices if any(i in (["mqtt", node], ["mqtt", node_b]) for i in d.get("identifiers", []))]
                return mine if len(mine) == 2 else None
            pair = await until(both, 30) or []
            check(f"{tag} two panels with one host name are two devices", len(pair) == 2 and all(d.get("name") == host for d in pair))
            registry = await ha.ws({"type": "config/entity_registry/list"}) or []
            status_b = next((e["entity_id"] for e in registry if e.get("unique_id") == f"{node_b}_status"), None)
            await until(lambda: _available(ha, status_b or "x"), 15)
            logged = (len(a.log()), len(b.log()))
            end = time.monotonic() + args.pair_seconds
            unavailable = 0
            while time.monotonic() < end:
                for entity in (ids.get("status"), status_b):
                    if (await ha.state(entity or "x") or {}).get("state") in (None, "unavailable"):
                        unavailable += 1
                await asyncio.sleep(1)
            check(f"{tag} both available for {args.pair_seconds:.0f} s", unavailable == 0, f"{unavailable} unavailable readings")
            check(f"{tag} neither panel lost its connection meanwhile (no reconnect loop)",
                  all(word not in a.log()[logged[0]:] + b.log()[logged[1]:] for word in ("mqtt down", "keeps dropping")))

            # Nothing secret on the wire, and no warning of HA's about our discovery.
            with open(os.path.join(args.work, "capture.txt"), errors="replace") as f:
                captured = f.read()
            check(f"{tag} no machine id and no code on the wire", machine_a not in captured and machine_b not in captured
                  and "3d1219" not in captured)
            with open(os.path.join(args.work, "ha", "home-assistant.log"), errors="replace") as f:
                lines = [line for line in f if ("WARNING" in line or "ERROR" in line) and ("mqtt" in line.lower() or "resend" in line.lower())]
            check(f"{tag} no warning or error about MQTT in HA's log", not lines, "".join(lines[:5])[:800])
    finally:
        for panel in panels:
            panel.kill(signal.SIGCONT)
            panel.kill()
        ha.stop()
        capture.kill()
        broker.kill()
    return passed, failed


async def _available(ha, entity):
    state = await ha.state(entity)
    return state if state and state.get("state") not in ("unavailable", "unknown") else None


async def _state_is(ha, entity, value):
    return ((await ha.state(entity or "x")) or {}).get("state") == value


async def _state_not(ha, entity, value, missing_ok=False):
    state = await ha.state(entity or "x")
    return state is not None and state.get("state") != value


async def _attribute_is(ha, entity, key, value):
    return ((await ha.state(entity or "x")) or {}).get("attributes", {}).get(key) == value


def _subsequence(needle, haystack):
    it = iter(haystack)
    return all(any(x == y for y in it) for x in needle)


if __name__ == "__main__":
    p, f = asyncio.run(main())
    print(f"ha-test-driver: {p} passed, {f} failed", flush=True)
    raise SystemExit(0 if f == 0 else 1)
