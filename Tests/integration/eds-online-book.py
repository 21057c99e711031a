#!/usr/bin/python3
"""Asks Evolution Data Server where it keeps an online account's address book: on a private
session bus with private XDG folders, registers a CardDAV book (its server need not answer),
opens it in the real address-book factory through eds-book.py and prints, as one JSON line,
{"name": FILE} — the name of the database the backend made in the book's cache folder — or
{"error": TEXT}. The tests that write such a book through EBookCache write it there."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def closed_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main():
    with tempfile.TemporaryDirectory(prefix="qactd-eds-where-") as root:
        env = dict(os.environ)
        for name in ("data", "config", "cache", "runtime"):
            os.makedirs(os.path.join(root, name), mode=0o700)
            env["XDG_RUNTIME_DIR" if name == "runtime" else "XDG_%s_HOME" % name.upper()] = os.path.join(root, name)
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + os.path.join(root, "bus")
        env["GSETTINGS_BACKEND"] = "memory"
        sources = os.path.join(root, "config", "evolution", "sources")
        os.makedirs(sources)
        with open(os.path.join(sources, "online.source"), "w") as source:
            source.write("[Data Source]\nDisplayName=Contacts\nEnabled=true\n\n[Address Book]\nBackendName=carddav\n\n"
                         "[Authentication]\nHost=127.0.0.1\nMethod=none\nPort=%d\n\n[Security]\nMethod=none\n\n"
                         "[WebDAV Backend]\nResourcePath=/contacts/\n" % closed_port())
        bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--nopidfile",
                                "--address=" + env["DBUS_SESSION_BUS_ADDRESS"]], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while not os.path.exists(os.path.join(root, "bus")):
                if time.monotonic() > deadline:
                    raise RuntimeError("dbus-daemon did not listen")
                time.sleep(0.01)
            driver = subprocess.run([sys.executable, os.path.join(HERE, "eds-book.py")], env=env, cwd=HERE,
                                    input=json.dumps({"op": "open", "book": "online"}) + "\n",
                                    capture_output=True, text=True, timeout=60)
            answers = [json.loads(line) for line in driver.stdout.splitlines() if line.startswith("{")]
            opened = next((answer for answer in answers if "ok" in answer), None)
            if not opened or not opened["ok"]:
                raise RuntimeError("EDS did not open the book: %s %s" % (opened, driver.stderr[-2000:]))
            folder = os.path.join(root, "cache", "evolution", "addressbook", "online")
            if os.path.dirname(opened["database"]) != folder:
                raise RuntimeError("EDS keeps the book in %s, not %s" % (opened["database"], folder))
            print(json.dumps({"name": os.path.basename(opened["database"])}))
        finally:
            bus.terminate()
            bus.wait()


try:
    main()
except Exception as error:  # noqa: BLE001 - reported to the test, which fails or skips with it
    print(json.dumps({"error": str(error)}))
