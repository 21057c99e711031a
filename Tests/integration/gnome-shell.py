#!/usr/bin/python3
"""GNOME Shell, the real one, keeps qactd's quick actions in step with `qactl list`.

  gnome-shell.py --bin DIR [--keep]

Starts, in a scratch folder with a HOME and XDG folders of its own: a private session bus and a
second private bus standing in for the system bus (neither activates services), Debian's
gnome-shell headless (Wayland, a virtual monitor, --unsafe-mode so that org.gnome.Shell.Eval
answers), with the demo app pinned to the dash through GIO's keyfile settings backend (which the
shell reads; the memory backend would keep the pin in this script), and the built qactd on the
demo contacts exporting everything into the demo app's desktop entry (DynamicItems=desktop-entry).

At each step — the first export, a favorite added, renamed and removed, one added and renamed
inside the shell's delay, and a reload that empties DesktopFile= — it waits (polling, 7 s at most) until both what the shell's app system holds
(lookup_app(ID).get_app_info().list_actions()) and what a right-click on the dash icon shows
(its menu opened, read, closed every time) equal the displayed items of `qactl list`, and that the
app's name and icon are unchanged and the shell's search still finds it by its program's name
(qactl). Launched from the shell, the app runs its own command line
(one variable added). Then it unpins the app and measures what the app grid's icon
shows after one more change (a measurement: the grid keeps an icon per app, see README).

Prints one JSON object: {"ok", "steps": [{"step", "expected", "appSystem", "dash", "seconds"}],
"grid", "launch", "error"}; exits 0 when every step held, 1 otherwise, 77 when the shell cannot run here.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

try:
    import gi

    gi.require_version("Gio", "2.0")
    from gi.repository import Gio, GLib
except (ImportError, ValueError):
    gi = None

from scratch_desktop import DESKTOP_ID, Failure, ScratchDesktop, wait_for  # noqa: E402

TOOLS = ["gnome-shell", "dbus-daemon"]
# GNOME Shell notices a changed entry after GLib's monitor and its own batching: about 5 s.
STEP_TIMEOUT = 7.0
# How long the grid is watched after the app system has the new actions.
GRID_WATCH = 10.0
# A bus of our own that activates nothing: the shell's helpers (calendar server, a11y bus,
# permission store) are not started, so nothing outlives the test.
BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""

# Reads, through the shell's own objects, what it holds for the app and what a right-click on
# its icon shows: the icon's menu is opened as a right-click opens it (popupMenu), its action
# items read, and closed again.
READ_JS = r"""
(() => {
  const Main = imports.ui.main;
  const Shell = imports.gi.Shell;
  const id = %(id)s;
  const result = {};
  const app = Shell.AppSystem.get_default().lookup_app(id);
  if (app) {
    const info = app.get_app_info();
    result.searchByProgram = Shell.AppSystem.search(%(program)s).flat().includes(id);
    result.appSystem = info.list_actions().map(action => info.get_action_name(action));
    result.name = app.get_name();
    result.icon = info.get_icon() ? info.get_icon().to_string() : null;
  }
  const readMenu = icon => {
    if (!icon) return null;
    icon.popupMenu();
    const menu = icon._menu;
    const items = menu._actionSection._getMenuItems().filter(item => item.visible).map(item => item.label.text);
    menu.close();
    return items;
  };
  const where = %(where)s;
  if (where === 'dash') {
    const box = Main.overview.dash._box;
    const child = box.get_children().find(actor => actor.child && actor.child._delegate &&
      actor.child._delegate.app && actor.child._delegate.app.get_id() === id);
    result.dash = readMenu(child ? child.child._delegate : null);
  } else {
    const appDisplay = Main.overview._overview._controls._appDisplay;
    result.grid = readMenu(appDisplay._items.get(id));
  }
  return JSON.stringify(result);
})()
"""


# What the shell holds for a pinned launcher: an app of its own, with its name and description.
READ_APP_JS = r"""
(() => {
  const app = imports.gi.Shell.AppSystem.get_default().lookup_app(%(id)s);
  return JSON.stringify(app ? {name: app.get_name(), description: app.get_description()} : null);
})()
"""


class Unavailable(Exception):
    pass


class Session(ScratchDesktop):
    def __init__(self, bin_dir):
        super().__init__(bin_dir, "qactd-gnome-shell-", {
            "GSETTINGS_BACKEND": "keyfile", "GTK_A11Y": "none", "XDG_SESSION_TYPE": "wayland",
            "XDG_CURRENT_DESKTOP": "GNOME"})
        self.bus = None

    def prepare(self):
        super().prepare(["home/.config/glib-2.0/settings"], "desktop-entry")
        self.source_name, self.source_icon = "qactd Demo", "x-office-address-book"
        # The shell reads favorite-apps from GIO's keyfile backend in this HOME.
        self.pin([DESKTOP_ID], write_file=True)

    def pin(self, favorites, write_file=False):
        if write_file:
            with open(self.path("home/.config/glib-2.0/settings/keyfile"), "w") as keyfile:
                keyfile.write("[org/gnome/shell]\nfavorite-apps=%s\nwelcome-dialog-last-shown-version='999'\n"
                              % GLib.Variant("as", favorites).print_(False))
        else:
            self.eval("global.settings.set_strv('favorite-apps', %s); true" % json.dumps(favorites))

    def start_buses(self):
        for name, variable in [("bus", "DBUS_SESSION_BUS_ADDRESS"), ("system-bus", "DBUS_SYSTEM_BUS_ADDRESS")]:
            socket = self.path(name)
            with open(self.path(name + ".conf"), "w") as config:
                config.write(BUS_CONFIG % socket)
            self.start(["dbus-daemon", "--config-file=" + self.path(name + ".conf"), "--nofork", "--nopidfile"], name + ".log")
            wait_for("the private " + name, lambda: os.path.exists(socket))
            self.env[variable] = "unix:path=" + socket
        self.bus = Gio.DBusConnection.new_for_address_sync(
            self.env["DBUS_SESSION_BUS_ADDRESS"],
            Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)

    def eval(self, script):
        """org.gnome.Shell.Eval: the value as JSON text, or raises Failure."""
        reply = self.bus.call_sync("org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell", "Eval",
                                   GLib.Variant("(s)", (script,)), GLib.VariantType("(bs)"),
                                   Gio.DBusCallFlags.NONE, 5000, None)
        success, value = reply.unpack()
        if not success:
            raise Failure("Eval failed: %s" % value)
        return value

    def start_shell(self):
        started = time.monotonic()
        shell = self.start(["gnome-shell", "--headless", "--wayland", "--unsafe-mode", "--no-x11",
                            "--virtual-monitor", "1024x768"], "gnome-shell.log")

        def answers():
            if shell.poll() is not None:
                raise Unavailable("gnome-shell exited with %s: %s" % (shell.returncode, self.log_tail("gnome-shell.log")))
            try:
                return self.eval("!imports.ui.main.layoutManager._startingUp && !!imports.ui.main.overview.dash") == "true"
            except (GLib.Error, Failure):
                return False

        try:
            wait_for("gnome-shell to answer org.gnome.Shell.Eval", answers, timeout=60, interval=0.2)
        except Failure as error:
            raise Unavailable("%s: %s" % (error, self.log_tail("gnome-shell.log")))
        self.shell_seconds = round(time.monotonic() - started, 1)

    def log_tail(self, name, lines=15):
        try:
            with open(self.path(name), errors="replace") as log:
                return " | ".join(log.read().splitlines()[-lines:])
        except OSError:
            return ""

    def read(self, where):
        return json.loads(json.loads(self.eval(READ_JS % {"id": json.dumps(DESKTOP_ID), "where": json.dumps(where),
                                                          "program": json.dumps("qactl")})))

    def step(self, name, expected_from_list=True):
        """Waits until the app system and the dash icon's menu both show `List`'s items."""
        started = time.monotonic()
        expected = self.displayed() if expected_from_list else []
        last = {}
        # When the read that found the shell in step was sent: on a busy machine an Eval that
        # opens a menu may itself take a while to answer.
        seen = []

        def in_step():
            sent = time.monotonic()
            last.update(self.read("dash"))
            if last.get("appSystem") == expected and last.get("dash") == expected:
                seen.append(sent)
                return True
            return False

        record = {"step": name, "expected": expected}
        try:
            wait_for("the shell to show %s after '%s'" % (expected, name), in_step, timeout=STEP_TIMEOUT, interval=0.25)
        except Failure as error:
            raise Failure("%s; it still shows %s" % (error, last))
        finally:
            record.update({"appSystem": last.get("appSystem"), "dash": last.get("dash"),
                           "name": last.get("name"), "icon": last.get("icon"), "searchByProgram": last.get("searchByProgram"),
                           "seconds": round((seen[0] if seen else time.monotonic()) - started, 2),
                           "answeredAfter": round(time.monotonic() - started, 2)})
            self.steps.append(record)
        if (last.get("name"), last.get("icon")) != (self.source_name, self.source_icon):
            raise Failure("after '%s' the shell shows the app as %s, not as its own entry (%s, %s)"
                          % (name, (last.get("name"), last.get("icon")), self.source_name, self.source_icon))

    def contact(self, uid, name, favorite=True):
        path = self.path("contacts/personal/%s.vcf" % uid)
        with open(path + ".tmp", "w") as card:
            card.write("BEGIN:VCARD\nVERSION:4.0\nUID:%s\nFN:%s\nN:%s;;;;\nCATEGORIES:%s\nEND:VCARD\n"
                       % (uid, name, name, "favorite" if favorite else "friends"))
        os.rename(path + ".tmp", path)

    def pinned_step(self, name, desktop_id, expected):
        """Waits until the shell's app for the pinned launcher `desktop_id` is `expected`
        ({"name", "description"}, or None for no such app), within the step's time."""
        started = time.monotonic()
        last = {}

        def in_step():
            last["app"] = json.loads(json.loads(self.eval(READ_APP_JS % {"id": json.dumps(desktop_id)})))
            app = last["app"]
            if expected is None:
                return app is None
            return app is not None and app.get("name") == expected["name"] and (
                "description" not in expected or app.get("description") == expected["description"]) and (
                "not description" not in expected or app.get("description") != expected["not description"])

        try:
            wait_for("the shell to hold %s for the pinned launcher after '%s'" % (expected, name), in_step,
                     timeout=STEP_TIMEOUT, interval=0.25)
        except Failure as error:
            raise Failure("%s; it holds %s" % (error, last.get("app")))
        finally:
            self.steps.append({"step": name, "pinned": desktop_id, "expected": expected, "shell": last.get("app"),
                               "seconds": round(time.monotonic() - started, 2)})

    def wait_listed(self, condition):
        """The app resigns active, as apps do, so the favorites become its dynamic items again,
        until `List` shows the change (the daemon sees the contacts folder change first)."""
        def listed():
            self.qactl("resign-active")
            return condition(self.displayed())
        wait_for("qactl list to follow the contacts", listed, timeout=10, interval=0.2)

    def measure_grid(self):
        """Unpins the app, opens the grid, changes the list once and watches the grid icon's menu."""
        self.pin([])
        self.eval("imports.ui.main.overview.showApps(); true")
        before = wait_for("the app's icon in the grid", lambda: self.read("grid").get("grid"), timeout=STEP_TIMEOUT)
        self.contact("zz-grid-probe", "Abe Grid")
        self.wait_listed(lambda titles: "Abe Grid" in titles)
        expected = self.displayed()
        started = time.monotonic()
        wait_for("the app system to hold the new list", lambda: self.read("grid").get("appSystem") == expected,
                 timeout=STEP_TIMEOUT, interval=0.25)
        app_system_seconds = round(time.monotonic() - started, 2)
        reads = []
        matched_after = None

        def grid_in_step():
            shown = self.read("grid").get("grid")
            reads.append(shown)
            return shown == expected

        # Until the grid icon's menu shows the new list, or for GRID_WATCH seconds: the grid
        # keeps an icon's menu, so the deadline is the usual end, and the measurement.
        try:
            wait_for("the grid icon's menu to show the new list", grid_in_step, timeout=GRID_WATCH, interval=0.5)
            matched_after = round(time.monotonic() - started, 2)
        except Failure:
            pass
        watched = round(time.monotonic() - started, 1)
        # The grid makes an icon afresh for an app that comes back to it: pinning removes the
        # icon, unpinning makes a new one, which holds the app as the shell has it now.
        self.pin([DESKTOP_ID])
        wait_for("the grid to drop the pinned app's icon", lambda: self.read("grid").get("grid") is None, timeout=STEP_TIMEOUT)
        self.pin([])
        renewed = wait_for("the app's icon back in the grid", lambda: self.read("grid").get("grid"), timeout=STEP_TIMEOUT)
        return {"before": before, "expected": expected, "appSystemSeconds": app_system_seconds,
                "gridLast": reads[-1] if reads else None, "gridMatchedAfter": matched_after,
                "watchedSeconds": watched, "afterPinAndUnpin": renewed}

    def launch(self):
        """Launches the app as a click on its icon does: the process runs the app's own command
        line, with QACTD_ACTIONS the one variable added."""
        self.eval("imports.gi.Shell.AppSystem.get_default().lookup_app(%s).launch(0, -1, imports.gi.Shell.AppLaunchGpu.APP_PREF); true"
                  % json.dumps(DESKTOP_ID))
        wait_for("the launched app to connect", lambda: self.status().get("appConnected"), timeout=10)
        wanted = [os.path.join(self.bin, "qactl"), "app", "--socket=" + self.env["QACTD_SOCKET"]]

        def launched():
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    with open("/proc/%s/cmdline" % pid, "rb") as cmdline:
                        arguments = [part.decode() for part in cmdline.read().split(b"\0")[:-1]]
                    if arguments == wanted:
                        with open("/proc/%s/environ" % pid, "rb") as environ:
                            variables = [part.decode(errors="replace") for part in environ.read().split(b"\0")]
                        return int(pid), arguments, [v for v in variables if v.startswith("QACTD_ACTIONS=")]
                except OSError:
                    continue
            return None

        pid, arguments, added = wait_for("the launched app's process", launched, timeout=5)
        os.kill(pid, signal.SIGTERM)
        return {"argv": arguments, "added": added}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (logs)")
    parser.add_argument("--no-grid", action="store_true", help="skip the app grid's measurement")
    arguments = parser.parse_args()
    missing = [tool for tool in TOOLS if shutil.which(tool) is None] + (["python3-gi (Gio)"] if gi is None else [])
    if missing:
        print(json.dumps({"ok": False, "unavailable": True, "error": "missing: " + " ".join(missing)}))
        return 77

    session = Session(os.path.abspath(arguments.bin))
    session.steps = []
    report = {"ok": False, "folder": session.root, "steps": session.steps}
    status = 1
    try:
        session.prepare()
        session.start_buses()
        session.start_shell()
        report["shellStartSeconds"] = session.shell_seconds
        session.start_daemon()
        session.qactl("resign-active")
        session.step("first export")
        session.contact("zz-new-favorite", "Aaron Added")
        session.wait_listed(lambda titles: "Aaron Added" in titles)
        session.step("favorite added")
        session.contact("zz-new-favorite", "Aaron Renamed")
        session.wait_listed(lambda titles: "Aaron Renamed" in titles and "Aaron Added" not in titles)
        session.step("favorite renamed")
        os.unlink(session.path("contacts/personal/zz-new-favorite.vcf"))
        session.wait_listed(lambda titles: "Aaron Renamed" not in titles)
        session.step("favorite removed")
        # Two rewrites inside the shell's delay (A, B, C): it must end on C, which a marker
        # toggling between two values would give the same main group as A.
        session.contact("zz-quick", "Aaron Quick")
        session.wait_listed(lambda titles: "Aaron Quick" in titles)
        session.contact("zz-quick", "Aaron Quicker")
        session.wait_listed(lambda titles: "Aaron Quicker" in titles)
        session.step("favorite added and renamed at once")
        # A pinned quick action is an app of its own in the shell, and follows its contact: renamed,
        # removed (still there, disabled, saying why), back (enabled), unpinned (gone).
        pin = json.loads(session.qactl("pin", "--type", "FavoriteAction", "--contact", "zz-quick", "--json"))["pin"]
        pinned_id = os.path.basename(pin["desktopFile"])
        session.pinned_step("pinned", pinned_id, {"name": "Aaron Quicker"})
        session.contact("zz-quick", "Aaron Quickest")
        wait_for("the pin to follow the rename", lambda: json.loads(session.qactl("pins", "--json"))["pins"][0]["item"]["title"] == "Aaron Quickest", timeout=10)
        session.pinned_step("pinned contact renamed", pinned_id, {"name": "Aaron Quickest"})
        card = session.path("contacts/personal/zz-quick.vcf")
        with open(card) as saved:
            text = saved.read()
        os.unlink(card)
        wait_for("the pin to be disabled", lambda: json.loads(session.qactl("pins", "--json"))["pins"][0]["state"] == "disabled", timeout=10)
        message = json.loads(session.qactl("pins", "--json"))["pins"][0]["message"]
        session.pinned_step("pinned contact removed", pinned_id, {"name": "Aaron Quickest", "description": message})
        with open(card + ".tmp", "w") as back:
            back.write(text)
        os.rename(card + ".tmp", card)
        wait_for("the pin to be enabled", lambda: json.loads(session.qactl("pins", "--json"))["pins"][0]["state"] == "enabled", timeout=10)
        session.pinned_step("pinned contact back", pinned_id, {"name": "Aaron Quickest", "not description": message})
        session.qactl("unpin", pin["identifier"])
        session.pinned_step("unpinned", pinned_id, None)
        if not arguments.no_grid:
            report["grid"] = session.measure_grid()
            session.pin([DESKTOP_ID])
            # Back from the grid to the window overview: the dash shows in both.
            session.eval("imports.ui.main.overview.dash.showAppsButton.checked = false; true")
            session.step("pinned again")
        report["launch"] = session.launch()
        session.configure("", "desktop-entry")
        session.qactl("reload")
        wait_for("the exported entry to go", lambda: not os.path.exists(session.exported), timeout=10)
        # The app's own entry has no actions of its own: the shell offers none.
        session.step("DesktopFile= emptied", expected_from_list=False)
        report["ok"] = True
        status = 0
    except Unavailable as error:
        report["unavailable"] = True
        report["error"] = str(error)
        status = 77
    except (Failure, GLib.Error, subprocess.CalledProcessError, OSError, ValueError, KeyError) as error:
        report["error"] = str(error)
    finally:
        session.finish(report, arguments.keep)
    return status


if __name__ == "__main__":
    sys.exit(main())
