"""A scratch desktop for the launcher scripts (plank-dock.py, gnome-shell.py): a folder with a
HOME and XDG folders of its own, the built qactd on the demo contacts and static items exporting
the demo app's desktop entry, and the processes started there, stopped at the end."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DESKTOP_ID = "io.qactd.Demo.desktop"


class Failure(Exception):
    pass


def wait_for(what, condition, timeout=15.0, interval=0.1):
    """Polls `condition` until it returns something true (returned) or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise Failure("timed out after %.1f s waiting for %s" % (timeout, what))
        time.sleep(interval)


class ScratchDesktop:
    def __init__(self, bin_dir, prefix, environment):
        self.bin = bin_dir
        self.root = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
        self.processes = []
        self.env = dict(os.environ)
        home = self.path("home")
        for variable in ["DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS", "WAYLAND_DISPLAY", "DISPLAY",
                         "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "JOURNAL_STREAM", "WATCHDOG_USEC", "STATE_DIRECTORY", "INVOCATION_ID"]:
            self.env.pop(variable, None)
        self.env.update({
            "HOME": home, "XDG_CONFIG_HOME": home + "/.config", "XDG_DATA_HOME": home + "/.local/share",
            "XDG_CACHE_HOME": home + "/.cache", "XDG_RUNTIME_DIR": self.path("run"),
            # qactd's exports folder first, as its environment generator puts it for a session.
            "XDG_DATA_DIRS": home + "/.local/share/qactd/exports/share:" + self.path("share") + ":/usr/local/share:/usr/share",
            "XDG_STATE_HOME": self.path("state"), "QACTD_SOCKET": self.path("run/qactd.sock"),
            "NO_AT_BRIDGE": "1", "NO_COLOR": "1", "LANG": "C.UTF-8", "LANGUAGE": "",
        })
        self.env.update(environment)
        self.exported = self.env["XDG_DATA_HOME"] + "/qactd/exports/share/applications/" + DESKTOP_ID

    def path(self, relative):
        return os.path.join(self.root, relative)

    def start(self, arguments, log, **options):
        handle = open(self.path(log), "wb")
        process = subprocess.Popen(arguments, env=self.env, stdout=handle, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, **options)
        self.processes.append(process)
        return process

    def qactl(self, *arguments):
        result = subprocess.run([os.path.join(self.bin, "qactl"), *arguments], env=self.env, capture_output=True, text=True)
        if result.returncode != 0:
            raise Failure("qactl %s failed: %s" % (" ".join(arguments), result.stderr.strip()))
        return result.stdout

    def status(self):
        return json.loads(self.qactl("status", "--json"))

    def displayed(self):
        """The titles `qactl list` shows."""
        return [row["item"]["title"] for row in json.loads(self.qactl("list", "--json"))["items"]]

    def prepare(self, folders, mode):
        """The demo's contacts and static items, and the demo app's own entry in share/ (with an
        Exec that needs no terminal: a launcher only needs an entry that launches)."""
        for folder in folders + ["home/.local/share/applications", "share/applications", "run", "state"]:
            os.makedirs(self.path(folder), exist_ok=True)
        os.chmod(self.path("run"), 0o700)
        etc = os.path.join(REPOSITORY, "etc/qactd")
        shutil.copytree(os.path.join(etc, "contacts"), self.path("contacts"))
        shutil.copy(os.path.join(etc, "shortcuts.plist"), self.path("shortcuts.plist"))
        with open(os.path.join(etc, DESKTOP_ID)) as source, open(self.path("share/applications/" + DESKTOP_ID), "w") as target:
            for line in source:
                if line.startswith("Exec="):
                    line = "Exec=%s app --socket=%s\n" % (os.path.join(self.bin, "qactl"), self.env["QACTD_SOCKET"])
                elif line.startswith("Terminal="):
                    line = "Terminal=false\n"
                target.write(line)
        self.configure(DESKTOP_ID, mode)

    def configure(self, desktop_file, mode, shortcuts=""):
        """`shortcuts`: more lines for [Shortcuts]."""
        with open(self.path("qactd.conf"), "w") as configuration:
            configuration.write("[Contacts]\nDirectory=contacts\n[Shortcuts]\nStaticItems=shortcuts.plist\n%s"
                                "[Launcher]\nDesktopFile=%s\nDynamicItems=%s\n[Daemon]\nSocket=%s\n"
                                % (shortcuts, desktop_file, mode, self.env["QACTD_SOCKET"]))

    def start_daemon(self):
        self.start([os.path.join(self.bin, "qactd"), "--config", self.path("qactd.conf"), "--log-level", "debug"], "qactd.log")
        wait_for("qactd", lambda: subprocess.run([os.path.join(self.bin, "qactl"), "status"], env=self.env,
                                                 capture_output=True).returncode == 0)

    def stop(self):
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def finish(self, report, keep):
        """Stops what was started, removes the folder unless something failed or `keep`, and
        prints the report as one JSON line."""
        self.stop()
        if report["ok"] and not keep:
            shutil.rmtree(self.root, ignore_errors=True)
        print(json.dumps(report, ensure_ascii=False))
