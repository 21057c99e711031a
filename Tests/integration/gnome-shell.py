#!/usr/bin/python3
"""GNOME Shell, the real one, with qactd's extension: live quick actions in the dash and the app
grid, and a running app never detached from its icon.

  gnome-shell.py --bin DIR [--root DIR] [--live-only] [--keep]

Starts, in a scratch folder with a HOME and XDG folders of its own: a private session bus and a
second private bus standing in for the system bus (neither activates services), Debian's
gnome-shell headless (Wayland, a virtual monitor, --unsafe-mode so that org.gnome.Shell.Eval
answers) with qactd's extension (gnome-shell/quick-actions@qactd.io, installed into the HOME by
scripts/gnome-shell-extension as `make install` installs it) enabled by `gnome-extensions enable`
and active as the shell reports it over D-Bus (GetExtensionInfo) and as `qactl status` says it
(again once the extension is disabled: "disabled", with the command that enables it; and at the
end, uninstalled through the shell: "not installed"), the demo app pinned to the dash through GIO's keyfile settings
backend (which the shell reads; the memory backend would keep the pin in this script), and the
built qactd on the demo contacts.

The extension, at the default DynamicItems=auto (the favorites leave the entry while it runs): after the first export (the static items in the
desktop entry, the favorites in the quicklist), the demo app's window is opened (a real GTK window
whose application ID is the entry's), the app unpinned so that it has an icon both in the dash
(running) and in the app grid, and at each step — a favorite added, renamed and removed, the
extension disabled and enabled again — the dash's and the grid's menus (opened through the shell's
own objects as a right-click opens them, read, closed) must both equal the displayed items of
`qactl list`, each once (polled; the time is reported, the test holds it to 1 s).

The running app, with DynamicItems=desktop-entry (every change rewrites the entry): with the window
still open, at each rewrite — the favorites back in the entry, one added, renamed, removed — the
shell re-reads its applications (its installed-changed signal, counted from inside the shell) and
must still have one icon for the app in the dash, the same app object, running, with its window.
The app keeps its name and icon and the shell's search finds it by its program's name.

Faces, right after the first export: with FavoriteFaces=yes a pinned favorite whose photo is one
solid colour has its face as its launcher's icon (the shell's app holds that file, and the shell's
own screenshot of the app grid shows the colour, which it did not before the pin); the favorite,
the pin and the setting then go again.

Then, as before, a pinned quick action follows its contact; launched from the shell the app runs
its own command line with nothing added; and a reload that empties DesktopFile= leaves the app's own
entry (no actions).

Faces, read off screenshots (org.gnome.Shell.Screenshot, which --unsafe-mode allows) with
tesseract: with FavoriteFaces=yes and a pure magenta photo on Ada Lovelace's card, the extension's
menu in the dash and in the app grid and Dash to Dock's menu show a patch of magenta beside her name and Arnold
Schönberg's monogram colour beside his (he has no photo); with FavoriteFaces=no neither colour
("faces": [{"step", "menu", "counts", ...}]).

With --attach-only, a window of the demo app and one of a second mail app open before qactd
starts (DesktopFile=auto, the default DynamicItems=auto): the first export waits while the app runs
(qactl status says so; written once its window closes), and through it, a favorite added, renamed
and removed, the default mail app (mimeapps.list rewritten by a rename) switched to the other app
and back, DesktopFile= emptied and qactd stopped, each app stays one running icon in the dash with
its window, the app the shell looks up ("attached": [{"step", "apps": {ID: ...}}]); the favorites
move to the new default's icon ("switches": [{"to", "seconds"}]) and the old one's copy, where
there is one, is retired (the app's own entry, X-Qactd-Retired=true), not deleted; a retired copy
goes once its app's window closed ("retiredDeletedSeconds"), and a first export that waited is
written then ("deferredExportSeconds").

With --root DIR the shell and gnome-extensions run in that Debian root (Tests/integration/
debian-root.sh: Debian 13's GNOME 48 and Dash to Dock 100), everything else here; Eval's code uses
the names the shell's own D-Bus module has in scope in every version (Main, Shell, Gio), never
imports.ui, which GNOME 45 and later no longer have. With --live-only it stops after Dash to Dock.

With --bench N it only measures, for scripts/bench: with Recompute=change (settle 0), a contact's
star toggled N times, each time until the dash's menu shows the change; it prints {"ok", "bench":
{"seconds": [...]}}.

Prints one JSON object: {"ok", "steps": [{"step", "expected", "dash", "grid", "seconds", ...}],
"running": [{"step", ...}], "faces": [...], "pinnedFace", "launch", "error"}; exits 0 when every step held, 1 otherwise, 77 when
the shell cannot run here.
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

from scratch_desktop import DESKTOP_ID, REPOSITORY, Failure, ScratchDesktop, matches, pil_missing, wait_for  # noqa: E402

TOOLS = ["gnome-shell", "dbus-daemon"]
EXTENSION_UUID = "quick-actions@qactd.io"
# Debian's gnome-shell-extension-dashtodock (Ubuntu's dock is the same code).
DOCK_UUID = "dash-to-dock@micxgx.gmail.com"
# GNOME Shell notices a changed entry after GLib's monitor and its own batching: about 5 s.
STEP_TIMEOUT = 7.0
# The extension's steps are polled this long; the test holds their time to 1 s.
LIVE_TIMEOUT = 5.0

# Reads, through the shell's own objects, what it holds for the app and what a right-click on
# its icons shows: each icon's menu is opened as a right-click opens it (popupMenu), the items of
# the entry's actions and of the extension's quick actions read, and closed again. Also whether
# the app is running with its window, and whether the dash's icon holds that same app object.
READ_JS = r"""
(() => {
  const id = %(id)s;
  const result = {};
  const system = Shell.AppSystem.get_default();
  const app = system.lookup_app(id);
  if (app) {
    const info = app.get_app_info();
    result.searchByProgram = Shell.AppSystem.search(%(program)s).flat().includes(id);
    result.appSystem = info.list_actions().map(action => info.get_action_name(action));
    result.name = app.get_name();
    result.icon = info.get_icon() ? info.get_icon().to_string() : null;
    result.state = ['stopped', 'starting', 'running'][app.get_state()];
    result.windows = app.get_windows().length;
  }
  const running = system.get_running().filter(other => other.get_id() === id);
  result.runningApps = running.length;
  result.runningIsLookedUp = running.length === 1 && running[0] === app;
  result.installedChanged = global._qactdInstalledChanged || 0;
  const visibleLabels = section => section ? section._getMenuItems().filter(item => item.visible).map(item => item.label.text) : [];
  const readMenu = icon => {
    if (!icon) return null;
    icon.popupMenu();
    const menu = icon._menu;
    const items = visibleLabels(menu._actionSection).concat(visibleLabels(menu._qactdSection));
    menu.close();
    return items;
  };
  const dashIcons = Main.overview.dash._box.get_children().filter(actor => actor.child && actor.child._delegate &&
    actor.child._delegate.app && actor.child._delegate.app.get_id() === id).map(actor => actor.child._delegate);
  result.dashIcons = dashIcons.length;
  result.dashIconHoldsRunningApp = dashIcons.length === 1 && running.length === 1 && dashIcons[0].app === running[0];
  result.dash = readMenu(dashIcons[0]);
  if (%(grid)s) {
    const appDisplay = Main.overview._overview._controls._appDisplay;
    result.grid = readMenu(appDisplay._items.get(id));
  }
  return JSON.stringify(result);
})()
"""

# Clicks the extension's item titled %(title)s in the dash icon's menu, as a click activates it.
CLICK_JS = r"""
(() => {
  const id = %(id)s;
  const icon = Main.overview.dash._box.get_children().map(actor => actor.child && actor.child._delegate)
    .find(delegate => delegate && delegate.app && delegate.app.get_id() === id);
  icon.popupMenu();
  const item = icon._menu._qactdSection._getMenuItems().find(candidate => candidate.label.text === %(title)s);
  if (item) item.activate(null);
  icon._menu.close();
  return JSON.stringify(!!item);
})()
"""

# What a right-click on the app's icon in Dash to Dock shows: every visible item's label, sections
# (the quicklist's among them) read in place; null when the dock has no icon for the app.
DOCK_READ_JS = r"""
(() => {
  const id = %(id)s;
  const dock = Main.extensionManager.lookup(%(uuid)s);
  const manager = dock && (dock.imports ? dock.imports.docking : global._qactdDocking)?.DockManager.getDefault();
  const mainDock = manager && manager.mainDock;
  if (!mainDock) return JSON.stringify(null);
  const icons = mainDock.dash._box.get_children().map(actor => actor.child)
    .filter(child => child && child.app && child.app.get_id() === id);
  if (icons.length === 0) return JSON.stringify(null);
  icons[0].popupMenu();
  const menu = icons[0]._menu;
  const labels = section => section._getMenuItems().flatMap(item =>
    item._getMenuItems ? labels(item) : (item.visible && item.label ? [item.label.text] : []));
  const shown = labels(menu);
  menu.close();
  return JSON.stringify({icons: icons.length, labels: shown});
})()
"""

# Dash to Dock's docking module, whose DockManager holds the dock: GNOME 43 and 44 give an
# extension's modules as its `imports`; GNOME 45 and later import them as ES modules, where the
# same file imported here is the very module the dock runs once enabled (an Eval's code may await
# there). Imported before the dock is first enabled, so no step's time includes it.
DOCK_MODULE_JS = r"""
(async () => {
  const dock = Main.extensionManager.lookup(%(uuid)s);
  if (dock && !dock.imports && !global._qactdDocking)
    global._qactdDocking = await import(dock.dir.get_child('docking.js').get_uri());
  return true;
})()
"""

# Counts the app system's installed-changed signals: each is a re-read of the applications, after
# which the shell has replaced every app whose entry it found changed.
COUNT_INSTALLED_JS = r"""
(() => {
  if (!global._qactdInstalledChanged) {
    global._qactdInstalledChanged = 0;
    Shell.AppSystem.get_default().connect('installed-changed', () => global._qactdInstalledChanged++);
  }
  return 'true';
})()
"""

# What the shell holds for a pinned launcher: an app of its own, with its name and description.
READ_APP_JS = r"""
(() => {
  const app = Shell.AppSystem.get_default().lookup_app(%(id)s);
  return JSON.stringify(app ? {name: app.get_name(), description: app.get_description()} : null);
})()
"""


# Faces: opens the app's icon's menu, in the overview's dash, the app grid or Dash to Dock
# (%(where)s), and leaves it open for a screenshot; says whether it is open and done animating, and
# where it is on the screen (the screenshot is read there only, away from icons' names in the grid).
FACES_OPEN_JS = r"""
(() => {
  const id = %(id)s;
  const where = %(where)s;
  let icon;
  if (where === 'grid') {
    icon = Main.overview._overview._controls._appDisplay._items.get(id);
  } else if (where === 'dock') {
    const dock = Main.extensionManager.lookup(%(uuid)s);
    const manager = dock && (dock.imports ? dock.imports.docking : global._qactdDocking)?.DockManager.getDefault();
    icon = manager && manager.mainDock && manager.mainDock.dash._box.get_children().map(actor => actor.child)
      .find(child => child && child.app && child.app.get_id() === id);
  } else {
    icon = Main.overview.dash._box.get_children().map(actor => actor.child && actor.child._delegate)
      .find(delegate => delegate && delegate.app && delegate.app.get_id() === id);
  }
  if (!icon) return JSON.stringify(null);
  if (!icon._menu || !icon._menu.isOpen) icon.popupMenu();
  const menu = icon._menu;
  const [x, y] = menu.actor.get_transformed_position();
  const [width, height] = menu.actor.get_transformed_size();
  return JSON.stringify({open: menu.isOpen, settled: menu.actor.opacity === 255 && menu.actor.visible,
    box: [x, y, width, height].map(Math.round)});
})()
"""

FACES_CLOSE_JS = r"""
(() => {
  const menus = [];
  const visit = actor => { if (actor._delegate && actor._delegate._menu) menus.push(actor._delegate._menu);
    if (actor._menu) menus.push(actor._menu); actor.get_children().forEach(visit); };
  visit(global.stage);
  menus.filter(menu => menu.isOpen).forEach(menu => menu.close());
  return 'true';
})()
"""

# The icon the shell holds for a pinned launcher: a file's path (an entry's Icon= that is a path
# is a GFileIcon), else the icon's name.
READ_APP_ICON_JS = r"""
(() => {
  const app = Shell.AppSystem.get_default().lookup_app(%(id)s);
  const icon = app ? app.get_icon() : null;
  if (!icon) return JSON.stringify(null);
  return JSON.stringify(icon instanceof Gio.FileIcon ? {path: icon.get_file().get_path()} : {name: icon.to_string()});
})()
"""

# Starts a screenshot of the whole stage into a PNG file, as the shell's own screenshot tool
# takes it; global._qactdShot says when it is written.
SCREENSHOT_JS = r"""
(() => {
  global._qactdShot = null;
  const stream = Gio.File.new_for_path(%(path)s).replace(null, false, Gio.FileCreateFlags.NONE, null);
  new Shell.Screenshot().screenshot(false, stream, (source, result) => {
    try {
      source.screenshot_finish(result);
      stream.close(null);
      global._qactdShot = 'done';
    } catch (error) {
      global._qactdShot = 'error: ' + error.message;
    }
  });
  return 'true';
})()
"""

MAGENTA = (255, 0, 255)
PHOTO, NO_PHOTO = "Ada Lovelace", "Arnold Schönberg"
# The photo of the face test's favorite: a colour no theme icon has.
FACE_COLOUR = (0xE0, 0x10, 0xB0)


def face_picture(path):
    """A face file's kind, size, the RGBA of its middle and of its corner, and the photo's colour."""
    from PIL import Image

    with Image.open(path) as image:
        kind, (width, height) = image.format, image.size
        rgba = image.convert("RGBA")
        return {"format": kind, "size": [width, height], "middle": list(rgba.getpixel((width // 2, height // 2))),
                "corner": list(rgba.getpixel((0, 0))), "photo": list(FACE_COLOUR)}
# How many of its pixels make the face on screen (a launcher's icon is some 40 px across or more).
FACE_PIXELS = 200


class Unavailable(Exception):
    pass


class Session(ScratchDesktop):
    def __init__(self, bin_dir, shell_root=None):
        super().__init__(bin_dir, "qactd-gnome-shell-", {
            "GSETTINGS_BACKEND": "keyfile", "GTK_A11Y": "none", "XDG_SESSION_TYPE": "wayland",
            "XDG_CURRENT_DESKTOP": "GNOME"})
        self.bus = None
        self.shell_root = shell_root

    def prepare(self):
        super().prepare(["home/.config/glib-2.0/settings"], None)
        self.source_name, self.source_icon = "qactd Demo", "x-office-address-book"
        # The extension as `make install` puts it (one folder for GNOME 43 to 49), in the HOME's
        # own extensions folder.
        subprocess.run([os.path.join(REPOSITORY, "scripts/gnome-shell-extension"), os.path.join(REPOSITORY, "gnome-shell", EXTENSION_UUID),
                        self.path("home/.local/share/gnome-shell/extensions/" + EXTENSION_UUID)], check=True, capture_output=True)
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
        self.start_private_buses()
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
        shell = self.start(self.in_shell_root(["gnome-shell", "--headless", "--wayland", "--unsafe-mode", "--no-x11",
                                               "--virtual-monitor", "1024x768"]), "gnome-shell.log")

        def answers():
            if shell.poll() is not None:
                raise Unavailable("gnome-shell exited with %s: %s" % (shell.returncode, self.log_tail("gnome-shell.log")))
            try:
                return self.eval("!Main.layoutManager._startingUp && !!Main.overview.dash") == "true"
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

    def read(self, grid=False, desktop_id=DESKTOP_ID):
        return json.loads(json.loads(self.eval(READ_JS % {"id": json.dumps(desktop_id), "grid": json.dumps(grid),
                                                          "program": json.dumps("qactl")})))

    def check_own_entry(self, name, shown):
        if (shown.get("name"), shown.get("icon")) != (self.source_name, self.source_icon):
            raise Failure("after '%s' the shell shows the app as %s, not as its own entry (%s, %s)"
                          % (name, (shown.get("name"), shown.get("icon")), self.source_name, self.source_icon))

    def first_export(self):
        """The shell picks up the exported copy (a new file for the app: about 5 s) and holds the
        static items as the entry's actions; the dash's menu adds the quicklist's favorites."""
        started = time.monotonic()
        displayed = self.displayed()
        static = [row["item"]["title"] for row in json.loads(self.qactl("list", "--json"))["items"] if row["source"] == "static"]
        last = {}

        def in_step():
            last.update(self.read())
            return last.get("appSystem") == static and last.get("dash") == displayed

        try:
            wait_for("the shell to hold the exported entry and the quicklist", in_step, timeout=STEP_TIMEOUT, interval=0.1)
        finally:
            self.steps.append({"step": "first export", "expected": displayed, "static": static, "appSystem": last.get("appSystem"),
                               "dash": last.get("dash"), "seconds": round(time.monotonic() - started, 2)})
        self.check_own_entry("first export", last)

    def live_step(self, name, changed_at):
        """Waits until the dash's and the grid's menus both show `List`'s items, each once, with the
        app running with its window; `changed_at`: when the change was made."""
        expected = self.displayed()
        last = {}
        seen = []

        def in_step():
            sent = time.monotonic()
            last.update(self.read(grid=True))
            if last.get("dash") == expected and last.get("grid") == expected:
                seen.append(sent)
                return True
            return False

        record = {"step": name, "expected": expected}
        try:
            wait_for("the dash and the grid to show %s after '%s'" % (expected, name), in_step, timeout=LIVE_TIMEOUT, interval=0.05)
        except Failure as error:
            raise Failure("%s; they still show %s" % (error, {key: last.get(key) for key in ["dash", "grid"]}))
        finally:
            record.update({key: last.get(key) for key in ["dash", "grid", "state", "windows", "dashIcons"]})
            record["seconds"] = round((seen[0] if seen else time.monotonic()) - changed_at, 3)
            self.steps.append(record)

    def running_step(self, name, change):
        """Makes `change` (which rewrites the exported entry), waits until the shell has re-read its
        applications since, and records whether the app is still one dash icon, the same app
        object, running, with its window."""
        before = os.stat(self.exported).st_mtime_ns if os.path.exists(self.exported) else None
        count = self.read()["installedChanged"]
        started = time.monotonic()
        change()
        wait_for("the exported entry to be rewritten after '%s'" % name,
                 lambda: os.path.exists(self.exported) and os.stat(self.exported).st_mtime_ns != before, timeout=10)
        shown = wait_for("the shell to re-read its applications after '%s'" % name,
                         lambda: (lambda read: read if read["installedChanged"] > count else None)(self.read()),
                         timeout=STEP_TIMEOUT + 3, interval=0.2)
        with open(self.exported) as entry:
            exported = entry.read()
        record = {"step": name, "seconds": round(time.monotonic() - started, 2), "actionsInEntry": exported.count("[Desktop Action ")}
        record.update({key: shown.get(key) for key in ["appSystem", "state", "windows", "dashIcons", "runningApps", "runningIsLookedUp",
                                                        "dashIconHoldsRunningApp", "name", "icon", "searchByProgram"]})
        self.running.append(record)
        self.check_own_entry(name, shown)

    def step(self, name, expected):
        """Waits until the app system and the dash icon's menu both show `expected` (the entry's
        actions as the shell reads a new file)."""
        started = time.monotonic()
        last = {}

        def in_step():
            last.update(self.read())
            return last.get("appSystem") == expected and last.get("dash") == expected

        record = {"step": name, "expected": expected}
        try:
            wait_for("the shell to show %s after '%s'" % (expected, name), in_step, timeout=STEP_TIMEOUT, interval=0.25)
        except Failure as error:
            raise Failure("%s; it still shows %s" % (error, last))
        finally:
            record.update({"appSystem": last.get("appSystem"), "dash": last.get("dash"),
                           "name": last.get("name"), "icon": last.get("icon"), "seconds": round(time.monotonic() - started, 2)})
            self.steps.append(record)
        self.check_own_entry(name, last)

    def open_window(self, desktop_id=DESKTOP_ID):
        """The app's window: a GTK window on the shell's Wayland display, its application ID
        the entry's."""
        sockets = [name for name in os.listdir(self.path("run")) if name.startswith("wayland-") and not name.endswith(".lock")]
        if not sockets:
            raise Failure("the shell made no Wayland socket in %s" % self.path("run"))
        environment = dict(self.env, WAYLAND_DISPLAY=sorted(sockets)[0], GDK_BACKEND="wayland")
        window = subprocess.Popen(["/usr/bin/python3", os.path.join(REPOSITORY, "Tests/integration/gtk-window.py"),
                                   desktop_id[:-len(".desktop")]], env=environment, stdout=open(self.path("window-%s.log" % desktop_id), "wb"),
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.processes.append(window)
        if desktop_id == DESKTOP_ID:
            self.window = window
        wait_for("%s to run with its window" % desktop_id,
                 lambda: (lambda read: read.get("state") == "running" and read.get("windows") == 1)(self.read(desktop_id=desktop_id)),
                 timeout=15, interval=0.2)
        return window

    def attached(self, name, change, exported_changes=True):
        """Makes `change` with a window of each app in `self.windows` open; when it rewrites an
        exported entry (`exported_changes`), waits until the shell has re-read its applications
        since. Then each app must still be one icon in the dash, the app the shell looks up,
        running, with its window: the file its desktop ID resolves to did not change under it."""
        count = self.read()["installedChanged"]
        started = time.monotonic()
        change()
        if exported_changes:
            wait_for("the shell to re-read its applications after '%s'" % name,
                     lambda: self.read()["installedChanged"] > count, timeout=STEP_TIMEOUT + 3, interval=0.2)
        record = {"step": name, "seconds": round(time.monotonic() - started, 2), "apps": {}}
        self.attached_steps.append(record)
        for desktop_id in self.windows:
            shown = self.read(desktop_id=desktop_id)
            record["apps"][desktop_id] = {key: shown.get(key) for key in [
                "state", "windows", "dashIcons", "runningApps", "runningIsLookedUp", "dashIconHoldsRunningApp", "appSystem"]}
            if not (shown.get("state") == "running" and (shown.get("windows") or 0) >= 1 and shown.get("dashIcons") == 1
                    and shown.get("runningApps") == 1 and shown.get("runningIsLookedUp") and shown.get("dashIconHoldsRunningApp")):
                raise Failure("after '%s' %s is not one running icon with its window in the dash: %s" % (name, desktop_id, shown))
        return record

    def exported_text(self, desktop_id):
        path = os.path.join(os.path.dirname(self.exported), desktop_id)
        try:
            with open(path) as entry:
                return entry.read()
        except FileNotFoundError:
            return None

    def default_mail_app(self, desktop_id):
        """mimeapps.list rewritten by a rename, as GNOME's Settings (GIO) writes it."""
        path = self.path("home/.config/mimeapps.list")
        with open(path + ".tmp", "w") as mimeapps:
            mimeapps.write("[Default Applications]\nx-scheme-handler/mailto=%s\n" % desktop_id)
        os.rename(path + ".tmp", path)

    def attach_steps(self, report):
        """Windows open through everything that changes which file an app's desktop ID resolves
        to or what it holds: the first export (which waits while the app runs), each favorite
        change, the default mail app switched to another app and back (the old app's copy
        retired, not deleted, and deleted once its window closed), DesktopFile= emptied, qactd
        stopped."""
        other = "io.qactd.Other.desktop"
        with open(self.path("share/applications/" + other), "w") as entry:
            entry.write("[Desktop Entry]\nType=Application\nName=qactd Other Mail\nIcon=mail-send\nExec=%s app --socket=%s %%u\n"
                        "MimeType=x-scheme-handler/mailto;\n" % (os.path.join(self.bin, "qactl"), self.env["QACTD_SOCKET"]))
        self.default_mail_app(DESKTOP_ID)
        self.configure("auto", None)
        self.windows = [DESKTOP_ID, other]
        windows = {desktop_id: self.open_window(desktop_id) for desktop_id in self.windows}

        def status_notice():
            return (self.status().get("desktopEntry") or {}).get("notice") or ""

        def start():
            self.start_daemon()
            self.qactl("resign-active")
            wait_for("the first export to wait for the app", lambda: "exported when it stops" in status_notice(), timeout=10)
        record = self.attached("first export waits while the app runs", start, exported_changes=False)
        record["exported"] = self.exported_text(DESKTOP_ID) is not None
        if record["exported"]:
            raise Failure("the first export did not wait for the running app")
        # Only the static items wait with the entry: the favorites are the quicklist's, live.
        favorites = [row["item"]["title"] for row in json.loads(self.qactl("list", "--json"))["items"] if row["source"] != "static"]
        record["favorites"] = favorites
        wait_for("the favorites in the dash's menu", lambda: self.read().get("dash") == favorites and favorites, timeout=LIVE_TIMEOUT)

        def window_closed(what, condition, key):
            """The demo app's window closed (the extension says the app stopped): `condition`
            within a step's time; then a window again, of the entry the ID resolves to now."""
            count = self.read()["installedChanged"]
            closed = time.monotonic()
            windows[DESKTOP_ID].send_signal(signal.SIGTERM)
            windows[DESKTOP_ID].wait(timeout=10)
            wait_for(what, condition, timeout=STEP_TIMEOUT)
            report.setdefault(key, []).append(round(time.monotonic() - closed, 2))
            # The shell sees the file come or go some 5 s later (GLib's monitor and its own
            # batching); a window opened before would be on the app object it then replaces.
            wait_for("the shell to re-read its applications", lambda: self.read()["installedChanged"] > count,
                     timeout=STEP_TIMEOUT + 3, interval=0.2)
            windows[DESKTOP_ID] = self.open_window()

        # The window closed, the export is written; a new window of the app is the exported entry's.
        window_closed("the deferred export", lambda: self.exported_text(DESKTOP_ID), "deferredExportSeconds")
        wait_for("the shell to hold the exported entry", lambda: self.read().get("appSystem") not in (None, []), timeout=STEP_TIMEOUT)

        def live(change, condition):
            def run():
                change()
                self.wait_listed(condition)
                wait_for("the dash to follow", lambda: self.read().get("dash") == self.displayed(), timeout=LIVE_TIMEOUT)
            return run
        self.attached("favorite added", live(lambda: self.contact("zz-attached", "Aaron Attached"),
                                             lambda titles: "Aaron Attached" in titles), exported_changes=False)
        self.attached("favorite renamed", live(lambda: self.contact("zz-attached", "Aaron Reattached"),
                                               lambda titles: "Aaron Reattached" in titles and "Aaron Attached" not in titles),
                      exported_changes=False)
        self.attached("favorite removed", live(lambda: os.unlink(self.path("contacts/personal/zz-attached.vcf")),
                                               lambda titles: "Aaron Reattached" not in titles), exported_changes=False)

        def switch(to, away):
            def run():
                started = time.monotonic()
                self.default_mail_app(to)
                favorite = "Ada Lovelace"
                moved = wait_for("the favorites to move to %s's icon" % to,
                                 lambda: favorite in (self.read(desktop_id=to).get("dash") or [])
                                 and favorite not in (self.read(desktop_id=away).get("dash") or []), timeout=10, interval=0.02)
                seconds = round(time.monotonic() - started, 3)
                away_text = self.exported_text(away)
                if away_text is not None:
                    away_text = wait_for("%s's copy to be retired" % away, lambda: (lambda text: text if "X-Qactd-Retired=true" in text else None)(
                        self.exported_text(away)), timeout=10, interval=0.02)
                self.switches.append({"to": to, "seconds": seconds, "movedShown": bool(moved),
                                      "awayCopy": "retired" if away_text else "none",
                                      "retiredHasQactl": "qactl trigger" in (away_text or ""),
                                      "retiredHasFavorite": favorite in (away_text or ""),
                                      "toCopy": "exported" if "X-Qactd-Retired" not in (self.exported_text(to) or "X-Qactd-Retired") else "none or retired"})
            return run
        self.switches = []
        report["switches"] = self.switches
        # Away from the demo app: its copy is rewritten (retired), the other app's first export waits.
        self.attached("default mail app switched", switch(other, DESKTOP_ID))
        # No shell holds the demo app's retired copy once its window closed: it goes.
        window_closed("the retired copy to go once the app stopped", lambda: self.exported_text(DESKTOP_ID) is None, "retiredDeletedSeconds")
        # Back to the demo app, whose window is open: its first export waits again, until it closes.
        self.attached("default mail app switched back", switch(DESKTOP_ID, other))
        window_closed("the deferred export", lambda: self.exported_text(DESKTOP_ID), "deferredExportSeconds")

        def emptied():
            self.configure("", None)
            self.qactl("reload")
            wait_for("the copy to be retired", lambda: "X-Qactd-Retired=true" in (self.exported_text(DESKTOP_ID) or ""), timeout=10)
        self.attached("DesktopFile= emptied", emptied)


        def stopped():
            daemon = next(process for process in self.processes if process.args and process.args[0].endswith("/qactd"))
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=10)
        self.attached("qactd stopped", stopped, exported_changes=False)
        report["retiredLeft"] = sorted(name for name in os.listdir(os.path.dirname(self.exported))
                                       if "X-Qactd-Retired=true" in (self.exported_text(name) or ""))

    def close_window(self):
        self.window.send_signal(signal.SIGTERM)
        self.window.wait(timeout=10)
        wait_for("the app to stop", lambda: self.read().get("state") == "stopped", timeout=10, interval=0.2)

    def click(self, title):
        """Clicks the extension's item `title` in the dash's menu; with no app connected, qactd keeps
        it as the pending launch item, as for a click in a dock's quicklist."""
        if not json.loads(json.loads(self.eval(CLICK_JS % {"id": json.dumps(DESKTOP_ID), "title": json.dumps(title)}))):
            raise Failure("no item '%s' in the dash's menu" % title)
        pending = wait_for("qactd to take the click on '%s'" % title, lambda: self.status().get("pendingLaunchItem"), timeout=10)
        self.eval("Main.overview.show(); true")
        return {"title": title, "pending": pending}

    def bench(self, toggles):
        """Seconds from a star toggled in a contact's card to the dash's menu showing the change."""
        self.configure(DESKTOP_ID, None, "Recompute=change\nRecomputeSettleMSec=0\n")
        self.qactl("reload")
        seconds = []
        for number in range(toggles):
            favorite = number % 2 == 0
            started = time.monotonic()
            self.contact("zz-bench", "Aaron Bench", favorite=favorite)
            wait_for("the dash to show the star toggled (%d)" % number,
                     lambda: ("Aaron Bench" in (self.read().get("dash") or [])) == favorite, timeout=LIVE_TIMEOUT, interval=0.005)
            seconds.append(round(time.monotonic() - started, 4))
        return {"seconds": seconds}

    def extension_state(self):
        """The extension's state as the shell reports it over D-Bus (GetExtensionInfo's "state":
        1 active, 2 inactive, 3 error, 4 out of date, ...; None when the shell does not know it)."""
        reply = self.bus.call_sync("org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell.Extensions", "GetExtensionInfo",
                                   GLib.Variant("(s)", (EXTENSION_UUID,)), GLib.VariantType("(a{sv})"),
                                   Gio.DBusCallFlags.NONE, 5000, None)
        state = reply.unpack()[0].get("state")
        return int(state) if state is not None else None

    def uninstall_extension(self):
        """The shell's UninstallExtension (what `gnome-extensions uninstall` asks): the shell forgets
        the extension, and `qactl status` says it is not installed (no command: nothing to enable)."""
        removed = self.bus.call_sync("org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell.Extensions", "UninstallExtension",
                                     GLib.Variant("(s)", (EXTENSION_UUID,)), GLib.VariantType("(b)"),
                                     Gio.DBusCallFlags.NONE, 5000, None).unpack()[0]
        if not removed:
            raise Failure("the shell did not uninstall %s" % EXTENSION_UUID)
        return wait_for("qactl status to say the extension is not installed", lambda: (
            lambda shown: shown if shown and shown.get("state") == "not-installed" else None)(self.status().get("shellExtension")),
            timeout=10, interval=0.1)

    def set_extension(self, enabled, uuid=EXTENSION_UUID):
        self.eval("Main.extensionManager.%s(%s)" % ("enableExtension" if enabled else "disableExtension", json.dumps(uuid)))

    def read_dock(self):
        return json.loads(json.loads(self.eval(DOCK_READ_JS % {"id": json.dumps(DESKTOP_ID), "uuid": json.dumps(DOCK_UUID)})))

    def dock_step(self, name, changed_at, titles):
        """Waits until Dash to Dock's menu for the app shows `List`'s items, each once, among the
        dock's own items; `titles`: every quick action title the session used, to pick them out."""
        expected = self.displayed()
        known = set(titles) | set(expected)
        last = {}
        seen = []

        def in_step():
            sent = time.monotonic()
            last["dock"] = self.read_dock()
            if last["dock"] and [label for label in last["dock"]["labels"] if label in known] == expected:
                seen.append(sent)
                return True
            return False

        try:
            wait_for("Dash to Dock to show %s after '%s'" % (expected, name), in_step, timeout=LIVE_TIMEOUT, interval=0.05)
        except Failure as error:
            raise Failure("%s; it shows %s" % (error, last.get("dock")))
        finally:
            self.dock.append({"step": name, "expected": expected, "icons": (last.get("dock") or {}).get("icons"),
                              "menu": (last.get("dock") or {}).get("labels"),
                              "quickActions": [label for label in ((last.get("dock") or {}).get("labels") or []) if label in known],
                              "seconds": round((seen[0] if seen else time.monotonic()) - changed_at, 3)})

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

    # Faces in the menus, read off screenshots.

    def faces_screenshot(self, name):
        path = self.path(name)
        reply = self.bus.call_sync("org.gnome.Shell.Screenshot", "/org/gnome/Shell/Screenshot", "org.gnome.Shell.Screenshot",
                                   "Screenshot", GLib.Variant("(bbs)", (False, False, path)), GLib.VariantType("(bs)"),
                                   Gio.DBusCallFlags.NONE, 10000, None)
        success, written = reply.unpack()
        if not success:
            raise Failure("org.gnome.Shell.Screenshot did not write %s" % path)
        return written

    def faces_read(self, step, where, monogram, present):
        """Opens the app's menu (`where`: "dash", "grid" or "dock"), screenshots it, finds
        Ada's and Arnold's rows with tesseract and counts magenta and `monogram` beside each. With
        `present`, again (a new screenshot, the menu kept open) until both show, within a deadline."""
        arguments = {"id": json.dumps(DESKTOP_ID), "where": json.dumps(where), "uuid": json.dumps(DOCK_UUID)}
        # In the overview, where Dash to Dock stays shown too (over a window it may hide).
        self.eval("Main.overview.show(); true")
        wait_for("the overview", lambda: self.eval("Main.overview.visible && "
                                                   "!Main.overview.animationInProgress") == "true", timeout=10)
        # The app grid or the windows, as the dash's button shows them, once the move is over (the
        # overview's state 2 or 1). Dash to Dock, which replaces the dash, shows over either.
        if where != "dock":
            # Unchecked first: a button left checked while the overview shows the windows (as an
            # overview hidden from the grid leaves it) moves nothing when checked again.
            self.eval("Main.overview.dash.showAppsButton.checked = false; "
                      "Main.overview.dash.showAppsButton.checked = %s; true" % json.dumps(where == "grid"))
            wait_for("the overview's %s" % ("app grid" if where == "grid" else "windows"),
                     lambda: self.eval("Main.overview._overview._controls._stateAdjustment.value")
                     == ("2" if where == "grid" else "1"), timeout=10)
        record = {"step": step, "menu": where}
        deadline = time.monotonic() + LIVE_TIMEOUT
        try:
            while True:
                state = wait_for("the %s menu to open" % record["menu"],
                                 lambda: (lambda read: read if read and read["open"] and read["settled"] else None)(
                                     json.loads(json.loads(self.eval(FACES_OPEN_JS % arguments)))), timeout=10)
                shot = self.faces_screenshot("faces-%s-%s.png" % (where, step))
                from PIL import Image
                x, y, width, height = state["box"]
                menu = shot[:-len(".png")] + "-menu.png"
                Image.open(shot).crop((x, y, x + width, y + height)).save(menu)
                lines = self.read_lines(menu, origin=(x, y), contrast="-negate")
                counts = {}
                for title in (PHOTO, NO_PHOTO):
                    rows = [line for line in lines if matches(line[0], title)]
                    if rows:
                        counts[title] = {"magenta": self.colour_beside(rows[0][1], MAGENTA, shot=shot),
                                         "monogram": self.colour_beside(rows[0][1], monogram, shot=shot) if monogram else 0}
                record.update({"open": state, "lines": [line[0] for line in lines], "counts": counts, "shot": shot})
                complete = len(counts) == 2
                shown = complete and counts[PHOTO]["magenta"] > 0 and counts[NO_PHOTO]["monogram"] > 0
                if (complete and (not present or shown)) or time.monotonic() >= deadline:
                    break
        finally:
            self.eval(FACES_CLOSE_JS)
            self.faces.append(record)
        if len(record["counts"]) != 2:
            raise Failure("the %s menu's screenshot does not show both '%s' and '%s': %s"
                          % (record["menu"], PHOTO, NO_PHOTO, record["lines"]))

    def faces_steps(self):
        """FavoriteFaces=yes with a magenta photo on Ada's card, then no: each time the dash's
        menu (the extension) and Dash to Dock's, screenshotted."""
        self.photo("ada-lovelace", MAGENTA)
        monogram = None
        for faces in ["yes", "no"]:
            self.configure(DESKTOP_ID, None, launcher="FavoriteFaces=%s\n" % faces)
            self.qactl("reload")
            self.wait_listed(lambda titles: PHOTO in titles and NO_PHOTO in titles)
            if faces == "yes":
                monogram = wait_for("Arnold's monogram among the faces", lambda: self.monogram_colours().get("AS"))
                self.faces_monogram = monogram
            self.faces_read("FavoriteFaces=" + faces, "grid", monogram, faces == "yes")
            self.faces_read("FavoriteFaces=" + faces, "dash", monogram, faces == "yes")
            self.set_extension(True, DOCK_UUID)
            wait_for("the dock", lambda: self.read_dock() is not None, timeout=LIVE_TIMEOUT)
            self.faces_read("FavoriteFaces=" + faces, "dock", monogram, faces == "yes")
            self.set_extension(False, DOCK_UUID)
            wait_for("the dock to go", lambda: self.read_dock() is None, timeout=LIVE_TIMEOUT)
        self.configure(DESKTOP_ID, None)
        self.qactl("reload")
    def pinned_face_step(self, mode):
        """FavoriteFaces=yes (added to the configuration, reloaded) and a favorite whose photo is
        one solid colour, pinned: its launcher's Icon= is its face, a round PNG in qactd's faces
        folder (the photo's colour in its middle, its corner transparent), and the shell's app for that launcher has that very file
        as its icon. Unpinned at the end. Returns what it saw."""
        started = time.monotonic()
        self.face_mode = mode
        with open(self.path("qactd.conf"), "a") as configuration:
            configuration.write("[Launcher]\nFavoriteFaces=yes\n")
        self.qactl("reload")
        self.face_contact("zz-face", "Aaron Face", FACE_COLOUR)
        self.wait_listed(lambda titles: "Aaron Face" in titles)
        # The control: the app grid before the favorite is pinned has none of the photo's colour.
        self.show_grid(True)
        before = self.face_pixels("face-before.png")
        self.show_grid(False)
        pin = json.loads(self.qactl("pin", "--type", "FavoriteAction", "--contact", "zz-face", "--json"))["pin"]
        desktop_id = os.path.basename(pin["desktopFile"])
        seen = {"desktopFile": desktop_id, "gridBefore": before}
        try:
            def launcher_icon():
                # The launcher is written just after `pin` answers.
                try:
                    with open(pin["desktopFile"]) as entry:
                        icons = [line[5:].strip() for line in entry if line.startswith("Icon=")]
                except FileNotFoundError:
                    return None
                return icons[0] if icons and "/qactd/faces/" in icons[0] else None
            seen["icon"] = wait_for("the pinned launcher's Icon= to be a face", launcher_icon, timeout=10)
            seen["picture"] = face_picture(seen["icon"])

            def shell_icon():
                seen["shell"] = json.loads(json.loads(self.eval(READ_APP_ICON_JS % {"id": json.dumps(desktop_id)})))
                return seen["shell"] == {"path": seen["icon"]}
            try:
                wait_for("the shell's app for the pinned launcher to have the face as its icon", shell_icon,
                         timeout=STEP_TIMEOUT, interval=0.25)
            except Failure as error:
                raise Failure("%s; it has %s" % (error, seen.get("shell")))
            # As a person sees it: the launcher's icon in the app grid, in the shell's own screenshot.
            self.show_grid(True)

            def drawn():
                seen["gridAfter"] = self.face_pixels("face-after.png")
                return seen["gridAfter"] >= FACE_PIXELS
            try:
                wait_for("the app grid to show the face's colour", drawn, timeout=STEP_TIMEOUT, interval=0.2)
            finally:
                self.show_grid(False)
        finally:
            seen["seconds"] = round(time.monotonic() - started, 2)
            self.face = seen
            self.qactl("unpin", pin["identifier"])
            # As the steps after expect it: no such favorite, no faces.
            os.unlink(self.path("contacts/personal/zz-face.vcf"))
            self.wait_listed(lambda titles: "Aaron Face" not in titles)
            self.configure(DESKTOP_ID, self.face_mode)
            self.qactl("reload")
        return seen

    def face_pixels(self, name):
        """A screenshot of the stage, `name`, and how many of its pixels are the face's colour."""
        from PIL import Image

        path = self.path(name)
        self.eval(SCREENSHOT_JS % {"path": json.dumps(path)})
        shot = wait_for("the screenshot", lambda: json.loads(json.loads(self.eval("JSON.stringify(global._qactdShot)"))), timeout=10)
        if shot != "done":
            raise Failure("the shell's screenshot failed: %s" % shot)
        with Image.open(path) as image:
            return sum(1 for pixel in image.convert("RGB").getdata()
                       if all(abs(pixel[c] - FACE_COLOUR[c]) <= 48 for c in range(3)))

    def show_grid(self, shown):
        """Shows the overview's app grid, or closes the overview again, and waits until it
        stands still."""
        self.eval("Main.overview.showApps(); true" if shown else
                  "Main.overview.dash.showAppsButton.checked = false; Main.overview.hide(); true")
        wait_for("the overview to be %s" % ("shown" if shown else "closed"), lambda: self.eval(
            "Main.overview.visible === %s && !Main.overview.animationInProgress" % json.dumps(shown)) == "true",
            timeout=10)

    def wait_listed(self, condition):
        """The app resigns active, as apps do, so the favorites become its dynamic items again,
        until `List` shows the change (the daemon sees the contacts folder change first)."""
        def listed():
            self.qactl("resign-active")
            return condition(self.displayed())
        wait_for("qactl list to follow the contacts", listed, timeout=10, interval=0.2)

    def launch(self):
        """Launches the app as a click on its icon does: the process runs the app's own command
        line, with no variable of qactd's added."""
        self.eval("Shell.AppSystem.get_default().lookup_app(%s).launch(0, -1, Shell.AppLaunchGpu.APP_PREF); true"
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


# The example app's recent files (in the scratch folder), as its items' titles show them.
APP_FILES = ["Notes", "Agenda", "Letter"]


def app_items_step(session, report):
    """An app's own items: the built example app, connected as the demo app, publishes three
    recent files (DisplayLimit=10: all show beside the favorites); the dash's menu (the
    extension's section) must show the displayed items, theirs included, and a click on the
    second must reach the running app, which prints the file it opens. Into report["appItems"]."""
    session.configure(DESKTOP_ID, None, "DisplayLimit=10\n")
    session.qactl("reload")
    titles = ["Open " + name for name in APP_FILES]
    app = session.start([os.path.join(session.bin, "qactd-example-app"), DESKTOP_ID[:-len(".desktop")]]
                        + [session.path(name) for name in APP_FILES], "app.log")

    def output():
        if app.poll() is not None:
            raise Failure("the example app exited with %s: %s" % (app.returncode, open(session.path("app.log")).read()))
        return open(session.path("app.log")).read()

    record = report["appItems"] = {"titles": titles}
    wait_for("the example app to publish its items", lambda: "published 3 items" in output(), timeout=15)
    session.wait_listed(lambda listed: all(title in listed for title in titles))
    record["expected"] = session.displayed()
    last = {}
    try:
        wait_for("the dash's menu to show the app's items", lambda: last.update(session.read()) or last.get("dash") == record["expected"],
                 timeout=LIVE_TIMEOUT, interval=0.1)
    finally:
        record["dash"] = last.get("dash")
    record["clicked"] = json.loads(json.loads(session.eval(CLICK_JS % {"id": json.dumps(DESKTOP_ID), "title": json.dumps(titles[1])})))
    opened = "opening %s\n" % session.path(APP_FILES[1])
    try:
        wait_for("the app to open '%s'" % APP_FILES[1], lambda: opened in output(), timeout=10)
    finally:
        record["opened"] = [line for line in open(session.path("app.log")).read().splitlines() if line.startswith("opening")]
        app.terminate()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (logs)")
    parser.add_argument("--bench", type=int, metavar="N", help="only measure N stars toggled (scripts/bench)")
    parser.add_argument("--root", metavar="DIR", help="run the shell (and gnome-extensions) in this Debian root "
                        "(Tests/integration/debian-root.sh), the rest here")
    parser.add_argument("--live-only", action="store_true", help="only the extension's and Dash to Dock's live menus")
    parser.add_argument("--attach-only", action="store_true", help="only the running apps kept attached to their icons "
                        "through every change of their exported entries")
    arguments = parser.parse_args()
    root = os.path.abspath(arguments.root) if arguments.root else None
    missing = [tool for tool in TOOLS if tool != "gnome-shell" and shutil.which(tool) is None]
    missing += [] if os.path.exists(os.path.join(root or "/", "usr/bin/gnome-shell")) else ["gnome-shell"]
    missing += (["python3-gi (Gio)"] if gi is None else []) + ([] if arguments.live_only or arguments.attach_only else pil_missing())
    if root and os.geteuid() != 0:
        missing.append("root (to run the shell in %s)" % root)
    if missing:
        print(json.dumps({"ok": False, "unavailable": True, "error": "missing: " + " ".join(missing)}))
        return 77

    session = Session(os.path.abspath(arguments.bin), root)
    session.steps = []
    session.running = []
    session.dock = []
    session.faces = []
    session.attached_steps = []
    report = {"ok": False, "folder": session.root, "steps": session.steps, "running": session.running, "dock": session.dock,
              "faces": session.faces, "attached": session.attached_steps}
    status = 1
    try:
        session.prepare()
        session.start_buses()
        session.start_shell()
        report["shellStartSeconds"] = session.shell_seconds
        report["shellVersion"] = session.bus.call_sync(
            "org.gnome.Shell", "/org/gnome/Shell", "org.freedesktop.DBus.Properties", "Get",
            GLib.Variant("(ss)", ("org.gnome.Shell", "ShellVersion")), GLib.VariantType("(v)"),
            Gio.DBusCallFlags.NONE, 5000, None).unpack()[0]
        # Enabled as the README says, with the one command (the shell's own, where it runs).
        subprocess.run(session.in_shell_root(["gnome-extensions", "enable", EXTENSION_UUID]), env=session.env, check=True,
                       capture_output=True)
        try:
            report["extension"] = wait_for("the extension to be enabled", lambda: session.extension_state() == 1 and 1, timeout=10)
        finally:
            report["extensionState"] = session.extension_state()
        session.eval(COUNT_INSTALLED_JS)
        if arguments.attach_only:
            session.attach_steps(report)
            report["ok"] = True
            status = 0
            return status
        session.start_daemon()
        session.qactl("resign-active")
        # `qactl status` says the extension's state as the shell reports it.
        report["statusActive"] = session.status().get("shellExtension")
        # The extension: the static items from the entry, the favorites from the quicklist.
        session.first_export()
        if arguments.bench:
            report["bench"] = session.bench(arguments.bench)
            report["ok"] = True
            return 0
        if not arguments.live_only:
            # A pinned favorite with FavoriteFaces=yes: the shell's app has its face as its icon,
            # drawn in the app grid (the overview closed again after).
            session.pinned_face_step(None)
        session.open_window()
        # Unpinned, the running app has an icon in the dash and one in the app grid.
        session.pin([])
        session.eval("Main.overview.showApps(); true")
        wait_for("the app's icon in the grid", lambda: session.read(grid=True).get("grid"), timeout=STEP_TIMEOUT)
        session.live_step("shown", time.monotonic())
        changed = time.monotonic()
        session.contact("zz-new-favorite", "Aaron Added")
        session.wait_listed(lambda titles: "Aaron Added" in titles)
        session.live_step("favorite added", changed)
        changed = time.monotonic()
        session.contact("zz-new-favorite", "Aaron Renamed")
        session.wait_listed(lambda titles: "Aaron Renamed" in titles and "Aaron Added" not in titles)
        session.live_step("favorite renamed", changed)
        changed = time.monotonic()
        os.unlink(session.path("contacts/personal/zz-new-favorite.vcf"))
        session.wait_listed(lambda titles: "Aaron Renamed" not in titles)
        session.live_step("favorite removed", changed)
        # Enabled after qactd started, the extension is told the quicklist again at once.
        session.set_extension(False)
        wait_for("the extension's items to leave the menus",
                 lambda: (lambda read: read.get("dash") is not None and len(read["dash"]) < len(session.displayed()))(session.read()),
                 timeout=LIVE_TIMEOUT)
        report["statusDisabled"] = session.status().get("shellExtension")
        report["statusDisabledText"] = [line.strip() for line in session.qactl("status").splitlines() if "gnome extension" in line]
        changed = time.monotonic()
        session.set_extension(True)
        session.live_step("extension enabled again", changed)
        favorite = session.displayed()[-1]
        report["click"] = session.click(favorite)

        # Dash to Dock: the entry's actions and the quicklist, each item once, live; also after the
        # dock is disabled and enabled again (it keeps nothing and never asks: qactd announces
        # again when the dock takes com.canonical.Unity).
        if not os.path.isdir(session.root_path("/usr/share/gnome-shell/extensions/" + DOCK_UUID)):
            raise Unavailable("Dash to Dock is not installed (gnome-shell-extension-dashtodock)")
        session.eval(DOCK_MODULE_JS % {"uuid": json.dumps(DOCK_UUID)})
        used = ["Aaron Docked", "Aaron Redocked"]
        changed = time.monotonic()
        session.set_extension(True, DOCK_UUID)
        session.dock_step("dock enabled", changed, used)
        changed = time.monotonic()
        session.contact("zz-docked", "Aaron Docked")
        session.wait_listed(lambda titles: "Aaron Docked" in titles)
        session.dock_step("favorite added", changed, used)
        changed = time.monotonic()
        session.contact("zz-docked", "Aaron Redocked")
        session.wait_listed(lambda titles: "Aaron Redocked" in titles and "Aaron Docked" not in titles)
        session.dock_step("favorite renamed", changed, used)
        changed = time.monotonic()
        os.unlink(session.path("contacts/personal/zz-docked.vcf"))
        session.wait_listed(lambda titles: "Aaron Redocked" not in titles)
        session.dock_step("favorite removed", changed, used)
        session.set_extension(False, DOCK_UUID)
        wait_for("the dock to go", lambda: session.read_dock() is None, timeout=LIVE_TIMEOUT)
        changed = time.monotonic()
        session.set_extension(True, DOCK_UUID)
        session.dock_step("dock enabled again", changed, used)
        session.set_extension(False, DOCK_UUID)
        wait_for("the dock to go", lambda: session.read_dock() is None, timeout=LIVE_TIMEOUT)
        if arguments.live_only:
            app_items_step(session, report)
            report["statusUninstalled"] = session.uninstall_extension()
            report["ok"] = True
            status = 0
            return status

        # Faces beside the favorites' names, in the extension's menu and in Dash to Dock's.
        session.faces_steps()
        report["facesMonogram"] = session.faces_monogram

        # The running app: every change rewrites the entry; the app stays one, running, with its window.
        session.pin([DESKTOP_ID])
        session.eval("Main.overview.dash.showAppsButton.checked = false; true")

        def reload_into_entry():
            session.configure(DESKTOP_ID, "desktop-entry")
            session.qactl("reload")
        session.running_step("favorites into the entry", reload_into_entry)

        def added():
            session.contact("zz-new-favorite", "Aaron Added")
            session.wait_listed(lambda titles: "Aaron Added" in titles)

        def renamed():
            session.contact("zz-new-favorite", "Aaron Renamed")
            session.wait_listed(lambda titles: "Aaron Renamed" in titles and "Aaron Added" not in titles)

        def removed():
            os.unlink(session.path("contacts/personal/zz-new-favorite.vcf"))
            session.wait_listed(lambda titles: "Aaron Renamed" not in titles)
        session.running_step("favorite added", added)
        session.running_step("favorite renamed", renamed)
        session.running_step("favorite removed", removed)
        session.close_window()

        # A pinned quick action is an app of its own in the shell, and follows its contact: renamed,
        # removed (still there, disabled, saying why), back (enabled), unpinned (gone).
        session.contact("zz-quick", "Aaron Quicker")
        session.wait_listed(lambda titles: "Aaron Quicker" in titles)
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
        report["launch"] = session.launch()
        session.configure("", "desktop-entry")
        session.qactl("reload")
        wait_for("the exported entry to go", lambda: not os.path.exists(session.exported), timeout=10)
        # The app's own entry has no actions of its own: the shell offers none.
        session.step("DesktopFile= emptied", [])
        report["statusUninstalled"] = session.uninstall_extension()
        report["ok"] = True
        status = 0
    except Unavailable as error:
        report["unavailable"] = True
        report["error"] = str(error)
        status = 77
    except (Failure, GLib.Error, subprocess.CalledProcessError, OSError, ValueError, KeyError) as error:
        report["error"] = str(error)
    finally:
        report["pinnedFace"] = getattr(session, "face", None)
        session.finish(report, arguments.keep)
    return status


if __name__ == "__main__":
    sys.exit(main())
