#!/usr/bin/python3
"""KDE Plasma, the real one: the task manager's and Kickoff's menus of the exported app.

  plasma.py --bin DIR [--root DIR] [--keep]

Starts, in a scratch folder with a HOME and XDG folders of its own: Xvfb, a private session bus
and a second private bus standing in for the system bus, Debian's kwin_x11 (the window manager the
task manager learns the windows from), kded5 (which rebuilds KDE's service cache, KSycoca, when an
applications folder changes) and plasmashell with one panel: Kickoff and a task manager whose only
launcher is the demo app. Then the built qactd on the demo contacts exports the demo app's entry
(the default DynamicItems=auto: plasmashell owns com.canonical.Unity but draws no quicklist, so the
favorites stay in the desktop entry, the only place Plasma reads an app's actions from).

What a person sees is read from the screen: menus are opened with xdotool, the screen shot with
ImageMagick's import and read with tesseract. After the first export, a favorite added, renamed
and removed, each menu must show every displayed quick action (`qactl list`) exactly once and
none that is gone, polled; each step's time is reported from the change ("seconds") and from
qactd's write of the entry ("sinceWrite", which the test holds to 3 s), with the last poll that
did not show it ("notBefore"). Kickoff and the task manager can not both have a menu open, so
each is measured after changes of its own, not after the other's reading: first Kickoff (qactd
started, a favorite added, renamed, removed), then the task manager (qactd stopped and its copy
removed, its menu read to show none of the items, then the same four changes).

With --root DIR the Plasma of that Debian root runs there (Tests/integration/debian-root.sh:
Debian 13's Plasma 6.3, with kded6, kglobalacceld and kbuildsycoca6), through Tests/integration/
in-root, and everything else here: Xvfb (its abstract socket reaches the root), the buses, the
screen's reading and the built qactd, whose binaries the entry's Execs run inside the root.
Which Plasma runs is told by the files of the system it runs on (PLASMA).

Kickoff's search: opened through plasmashell's own D-Bus method, searched for the app, its entry
right-clicked. Within one opening Kickoff's results keep the actions they had, so each poll opens
it afresh, and what it shows is Kickoff's state when its search ran: a poll's moment is when its
results showed the app, not the reading of the menu after it (a poll takes a few seconds). It
is used once before qactd starts (plasmashell builds Kickoff the first time), and its menu then
shows none of the actions. Picking an item in its menu runs its Exec (qactl trigger).

The task manager: its icon is right-clicked a few times a second (a poll whose menu looks as the
one before is not read again). Picking a favorite in its menu runs its Exec: the daemon gets it
as the pending launch item.

Windows and their launcher: a real window of the app (gtk-window.py, started by Plasma from the
exported entry with a left click on the launcher) must take the launcher's place in the task
manager, not add an entry of its own, before and after the entry is rewritten; for an app known
by its WM_CLASS, by its GTK application ID and by its command line only (the entry's Exec). The
task manager shows a launcher as an icon and a window as its icon and title, so the panel is read:
the window's title once, starting right after the entry's own icon at the panel's left end. The
control, a window it cannot match (started by the script, another WM_CLASS and command line),
must read as an entry of its own after the launcher's icon.

Faces: a favorite whose photo is one solid colour, with FavoriteFaces=no and then yes: the task
manager's menu shows that colour left of the favorite's name (where the menu draws an action's
icon) only with yes, and round: in the box the colour is drawn in, its centre has the colour and
its corners the menu's background (Plasma draws an Icon= SVG with Qt's SVG Tiny renderer, which
has no clip paths: a photo's face is a PNG cut round by its alpha).

Prints one JSON object: {"ok", "steps" (the task manager's): [{"step", "expected", "gone", "menu",
"counts", "polls", "seconds", "sinceWrite", "notBefore"}], "kickoff": [...], "before" (the task
manager's menu with no export), "kickoffBefore": {"menu", "counts"}, "kickoffPick": {"chosen",
"pending"}, "kickoffRetries" (searches opened again since the app never showed), "chosen",
"pending", "windows": [{"case", "exec", "before", "after"}], "control",
"faces": [{"faces", "facePixels", "shape", "row", "icon", "seconds"}], "startSeconds", "plasma" (its major
version), "menusMissed", "launcherHovered", "error"}; exits 0 when everything held,
1 otherwise, 77 when a tool is missing.
"""
import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import time

from scratch_desktop import DESKTOP_ID, REPOSITORY, SCALE, Failure, ScratchDesktop, folded, icon_shape, wait_for

LIBEXEC = "/usr/lib/x86_64-linux-gnu/libexec/"
# What runs here, whichever system Plasma runs on.
TOOLS = ["xprop", "dbus-send", "Xvfb", "dbus-daemon", "xdotool", "import", "convert", "tesseract"]
# Plasma's own programs by major version, each as a path on the system Plasma runs on. The bus
# activates nothing, so what plasmashell needs is started by hand: kded (it rebuilds KSycoca
# when an applications folder changes), the global shortcuts' daemon and the activity manager.
PLASMA = {
    5: {"kded": "/usr/bin/kded5", "sycoca": "/usr/bin/kbuildsycoca5", "shortcuts": "/usr/bin/kglobalaccel5",
        "activities": LIBEXEC + "kactivitymanagerd", "environment": {"KDE_SESSION_VERSION": "5"}, "kickoffTextLeft": 0,
        "popupMargin": 0, "launcherTooltip": False},
    # Plasma 6 finds its menu as plasma-applications.menu (Debian ships no applications.menu with
    # it), and its kwin_x11 composites unless told not to (Xvfb has no GL to do it with).
    6: {"kded": "/usr/bin/kded6", "sycoca": "/usr/bin/kbuildsycoca6", "shortcuts": LIBEXEC + "kglobalacceld",
        "activities": LIBEXEC + "kactivitymanagerd",
        "environment": {"KDE_SESSION_VERSION": "6", "XDG_MENU_PREFIX": "plasma-", "KWIN_COMPOSE": "N"},
        # Kickoff 6 shows a result in two lines, name and description, beside an icon as tall as
        # both: read with the icon, the two read as one line. The text starts this far right of
        # the popup's frame.
        "kickoffTextLeft": 40,
        # Plasma 6's popups draw their frame inside a margin of their window that, with no
        # compositor, shows what is behind (the desktop, whose wallpaper fades in after the
        # start): a shot of the popup leaves it out.
        "popupMargin": 10,
        # Its launcher shows a tooltip whenever the pointer rests on it (showToolTips=false
        # does not keep it), over where the launcher's menu opens.
        "launcherTooltip": True},
}
# How long a step polls: well past the 3 s the test holds a step to, so a slow one is
# measured and reported, not cut off (under load a poll has taken seconds).
STEP_TIMEOUT = 15.0
# How long the task manager's menu may take to open before the right-click counts as missed.
MENU_OPENS = 1.0
# The screen Xvfb gives (ScratchDesktop.start_display's default).
WIDTH, HEIGHT = 1024, 768
PANEL = 44
MENU_HEIGHT = 300
MENU_WIDTH = 360
# Kickoff's menu of an app, at the right of Kickoff; Kickoff's header (its search field).
KICKOFF_MENU_WIDTH = 260
KICKOFF_HEADER = 50
# Words further apart than this (screen pixels) are not one menu item: an item and what
# stands beside the menu.
MENU_GAP = 60
# One panel along the bottom: the task manager (text, so a person and tesseract read which
# entries it has) with the demo app as its only launcher, then Kickoff. A desktop containment
# too: plasmashell lays out its default desktop when it finds none.
APPLETS = """[Containments][1]
activityId=
formfactor=0
immutability=1
lastScreen=0
location=0
plugin=org.kde.plasma.folder
wallpaperplugin=org.kde.color

[Containments][2]
activityId=
formfactor=2
immutability=1
lastScreen=0
location=4
plugin=org.kde.panel
wallpaperplugin=org.kde.image

[Containments][2][Applets][3]
immutability=1
plugin=org.kde.plasma.taskmanager

[Containments][2][Applets][3][Configuration][General]
launchers=applications:%(id)s
separateLaunchers=false
groupingStrategy=1
showOnlyCurrentDesktop=false
showOnlyCurrentActivity=false

[Containments][2][Applets][4]
immutability=1
plugin=org.kde.plasma.kickoff

[Containments][2][General]
AppletOrder=3;4
"""
PANEL_RC = """[PlasmaViews][Panel 2]
alignment=132

[PlasmaViews][Panel 2][Defaults]
thickness=%d
""" % PANEL


def plasma_version(shell_root):
    """The major version of the Plasma installed on the system rooted at `shell_root`, None when
    there is none."""
    for version in sorted(PLASMA, reverse=True):
        if os.path.exists(os.path.join(shell_root or "/", PLASMA[version]["kded"].lstrip("/"))):
            return version
    return None


class Session(ScratchDesktop):
    def __init__(self, bin_dir, shell_root, version):
        super().__init__(bin_dir, "qactd-plasma-", {
            "XDG_CURRENT_DESKTOP": "KDE", "KDE_FULL_SESSION": "true",
            "DESKTOP_SESSION": "plasma", "XDG_SESSION_TYPE": "x11", "QT_QPA_PLATFORM": "xcb",
            # KDE_DEBUG: a crash is logged, not handed to DrKonqi's dialog.
            "LIBGL_ALWAYS_SOFTWARE": "1", "QT_ACCESSIBILITY": "0", "KDE_DEBUG": "1",
            "QT_LOGGING_RULES": "*.debug=false",
        })
        self.shell_root = shell_root
        self.plasma = PLASMA[version]
        self.env.update(self.plasma["environment"])

    def prepare(self):
        super().prepare(["home/.config", "home/.cache"], None)
        # Every change of the favorites reaches the entry at once, as a person editing a
        # contact sees it.
        self.configure(DESKTOP_ID, None, "Recompute=change\nRecomputeSettleMSec=0\n")
        # The exports folder is there when the session starts, as it is once qactd has run: the
        # session's XDG_DATA_DIRS names it only from the login after qactd's first start.
        os.makedirs(os.path.dirname(self.exported))
        with open(self.path("home/.config/plasma-org.kde.plasma.desktop-appletsrc"), "w") as applets:
            applets.write(APPLETS % {"id": DESKTOP_ID})
        with open(self.path("home/.config/plasmashellrc"), "w") as rc:
            rc.write(PANEL_RC)
        # No splash, no first-run notices, no screen locking mid-test.
        with open(self.path("home/.config/kscreenlockerrc"), "w") as rc:
            rc.write("[Daemon]\nAutolock=false\nLockOnResume=false\n")
        with open(self.path("home/.config/kwinrc"), "w") as rc:
            rc.write("[Compositing]\nEnabled=false\n")

    def call(self, destination, path, interface, method, *arguments):
        return subprocess.run(["dbus-send", "--session", "--print-reply", "--dest=" + destination, path,
                               interface + "." + method, *arguments], env=self.env, capture_output=True, text=True)

    def start_plasma(self):
        started = time.monotonic()
        subprocess.run(self.in_shell_root([self.plasma["sycoca"], "--noincremental"]), env=self.env, capture_output=True)
        self.start(self.in_shell_root(["kwin_x11", "--replace"]), "kwin.log")
        wait_for("kwin_x11 managing the screen", lambda: "_NET_SUPPORTING_WM_CHECK" in subprocess.run(
            ["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"], env=self.env, capture_output=True, text=True).stdout
            and "not found" not in subprocess.run(["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"], env=self.env,
                                                  capture_output=True, text=True).stdout, timeout=30)
        self.start(self.in_shell_root([self.plasma["kded"]]), "kded.log")
        # The bus activates nothing: what plasmashell needs is started here. It refuses to load
        # without the activity manager; the shortcuts' daemon takes the global shortcuts.
        self.start(self.in_shell_root([self.plasma["activities"]]), "kactivitymanagerd.log")
        self.start(self.in_shell_root([self.plasma["shortcuts"]]), "kglobalaccel.log")
        wait_for("kactivitymanagerd on the bus", lambda: self.call(
            "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
            "string:org.kde.ActivityManager").stdout.rstrip().endswith("true"), timeout=30)
        self.start(self.in_shell_root(["plasmashell", "--no-respawn"]), "plasmashell.log")

        def panel():
            found = subprocess.run(["xdotool", "search", "--onlyvisible", "--class", "plasmashell"], env=self.env,
                                   capture_output=True, text=True).stdout.split()
            for window in found:
                geometry = subprocess.run(["xdotool", "getwindowgeometry", "--shell", window], env=self.env,
                                          capture_output=True, text=True).stdout
                values = dict(line.split("=", 1) for line in geometry.split())
                if int(values.get("WIDTH", 0)) >= WIDTH // 2 and 20 <= int(values.get("HEIGHT", 0)) <= 100:
                    return {key: int(values[key]) for key in ["X", "Y", "WIDTH", "HEIGHT"]}
            return None

        self.panel = wait_for("plasmashell's panel", panel, timeout=60, interval=0.3)
        # A desktop of one colour behind the menus, whose shots must settle: Plasma 6 lays out a
        # desktop of its own for the activity kactivitymanagerd makes (the configured one has
        # none), with an image that fades in, seconds after the start under load.
        painted = self.call("org.kde.plasmashell", "/PlasmaShell", "org.kde.PlasmaShell", "evaluateScript",
                            "string:desktops().forEach(function (desktop) { desktop.wallpaperPlugin = 'org.kde.color' })")
        if painted.returncode != 0:
            raise Failure("evaluateScript: " + painted.stderr.strip())
        wait_for("the desktop to settle in one colour", lambda: self.one_colour((0, 0, WIDTH, self.panel["Y"])), timeout=30, interval=0.2)
        self.start_seconds = round(time.monotonic() - started, 2)

    def one_colour(self, area):
        """Whether `area` of the screen is all one colour."""
        raw = self.pixels(*area)
        return raw == raw[:3] * (len(raw) // 3)

    def launcher_point(self):
        """The task manager's first entry, at the left end of the panel: a launcher is a square
        icon there, a window's entry starts with its icon."""
        return (self.panel["X"] + self.panel["HEIGHT"] // 2, self.panel["Y"] + self.panel["HEIGHT"] // 2)

    def settled(self, area, name, condition=lambda picture: True, timeout=5):
        """Shoots `area` into `name` until two shots in a row agree and the picture meets
        `condition` (within `timeout` seconds), and returns the picture: a menu is filled when it
        opens, so once two shots agree it is drawn (or gone). Sets `settled_at`: when the first of
        the two was taken."""
        shots, times = [], []

        def agree():
            shots.append(open(self.screenshot(name, area), "rb").read())
            times.append(time.monotonic())
            return len(shots) > 1 and shots[-1] == shots[-2] and condition(shots[-1])

        wait_for("the screen at %s to settle" % (area,), agree, timeout=timeout, interval=0.05)
        self.settled_at = times[-2]
        return shots[-1]

    def read_menu(self, point, area, hover=False, stale=None, keep_open=False, scale=SCALE):
        """Right-clicks `point` and reads `area`, where its menu opens: the menu's lines, and the
        menu's picture. When the picture is `stale` (the one a poll before read), it is not read
        again: None. A poll thus takes a fraction of a second until the menu changes. The menu
        is closed again (with Escape, which closes only the menu, never Kickoff) unless
        `keep_open`. `hover`: the pointer rests on `point` before `area` is shot, since the entry
        under it changes (Kickoff's); the task manager's launcher would show its tooltip, so its
        right-click comes with the move. `scale`: tesseract's, a larger area reads at less.
        Sets `opened_at`, just before the right-click, and `drawn_at`, when the menu was seen."""
        if hover:
            subprocess.run(["xdotool", "mousemove", str(point[0]), str(point[1])], env=self.env, check=True)
        # The area as the last menu closed in it left it, else shot now.
        closed = self.closed.get(area) if not hover else None
        if closed is None:
            closed = self.settled(area, "menu.png")
        self.opened_at = time.monotonic()
        if not hover and self.plasma["launcherTooltip"]:
            self.enter_launcher(point)
        subprocess.run(["xdotool", "mousemove", str(point[0]), str(point[1]), "click", "3"], env=self.env, check=True)
        try:
            # The task manager's menu opens well within this; Kickoff's may take longer.
            picture = self.settled(area, "menu.png", lambda shot: shot != closed, timeout=5 if hover else MENU_OPENS)
        except Failure:
            if hover:
                raise
            # Plasma 6 opens no menu for a right-click that comes while the task manager makes
            # the launcher anew from the rewritten entry: the poll shows nothing, the next
            # clicks again (counted: "menusMissed"). A menu that never opens fails the step.
            self.menus_missed += 1
            subprocess.run(["xdotool", "key", "Escape"], env=self.env, check=True)
            # Away again, so that the next poll's pointer enters the launcher anew.
            if self.plasma["launcherTooltip"]:
                self.pointer_away()
            self.closed.pop(area, None)
            return None, stale
        self.drawn_at = self.settled_at
        lines = None if picture == stale else self.read_lines(self.path("menu.png"), area[:2], scale, "-normalize", MENU_GAP)
        self.closed.pop(area, None)
        if not keep_open:
            self.close_menu(area, picture, away=not hover and self.plasma["launcherTooltip"])
        return lines, picture

    def enter_launcher(self, point):
        """Moves the pointer onto the launcher at `point` and waits until the task manager shows
        it hovered: Plasma 6 takes a right-click that comes with the pointer's move into the
        launcher only now and then. Between polls the pointer rests away from the launcher,
        whose tooltip would cover the menu's area (see close_menu)."""
        button = (self.panel["X"], self.panel["Y"], self.panel["HEIGHT"], self.panel["HEIGHT"])
        plain = self.pixels(*button)
        subprocess.run(["xdotool", "mousemove", str(point[0]), str(point[1])], env=self.env, check=True)
        try:
            wait_for("the launcher to show the pointer on it", lambda: self.pixels(*button) != plain, timeout=1, interval=0.02)
            self.hovered += 1
        except Failure:
            # Already on it, or not highlighted yet: the right-click comes all the same (a
            # menu that does not open is a poll that shows nothing).
            pass

    def pointer_away(self):
        """The pointer onto the empty desktop, off the panel and any menu."""
        subprocess.run(["xdotool", "mousemove", str(WIDTH // 2), str(HEIGHT // 3)], env=self.env, check=True)

    def close_menu(self, area, picture, away=False):
        """Closes the menu open in `area`, read as `picture`, with Escape, and waits until it is
        gone (the area then is the next poll's closed picture). `away`: the pointer leaves the
        launcher for the empty desktop, where Plasma 6 shows no tooltip of it (Kickoff's entries
        are hovered anew at each poll: there the pointer stays)."""
        subprocess.run(["xdotool", "key", "Escape"], env=self.env, check=True)
        if away:
            self.pointer_away()
        self.closed[area] = self.settled(area, "menu.png", lambda shot: shot != picture)

    def menu_area(self):
        """Where the task manager's menu opens: above the launcher, to its right; less to read is a
        quicker poll."""
        point = self.launcher_point()
        return (max(0, point[0] - 40), max(0, self.panel["Y"] - MENU_HEIGHT), MENU_WIDTH, MENU_HEIGHT)

    def step(self, into, name, expected, gone, changed_at, read, timeout, menu=None):
        """Polls `read` until the menu it reads shows each of `expected` once and none of `gone`,
        and appends the step's report to `into`. `read(stale)` returns the menu's lines (None when
        its picture is `stale`, the one the poll before read), its picture, the moment before the
        menu was asked for (what it shows can not be older) and the moment it was on the screen.
        The first poll that showed the change gives the step's time, from `changed_at`
        ("seconds") and from qactd's write of the entry ("sinceWrite"): an upper bound; the last
        poll that did not gives "notBefore", a lower one.
        The picture of `menu`'s step before is the stale one at first: until the change shows,
        a poll reads nothing, so the polls come a few times a second from the start."""
        state = {"polls": 0, "picture": self.pictures.get(menu)}

        def shown():
            state["polls"] += 1
            lines, state["picture"], asked, shown_at = read(state.get("picture"))
            if lines is not None:
                state["lines"] = lines
                state["counts"] = {title: sum(1 for line in lines if matches(line[0], title)) for title in expected + gone}
                if all(state["counts"][title] == 1 for title in expected) and not any(state["counts"][title] for title in gone):
                    state["seen"] = shown_at
                    return True
            state["notBefore"] = asked
            return False

        try:
            wait_for("the menu to show %s" % expected, shown, timeout=timeout, interval=0)
        finally:
            self.pictures[menu] = state.get("picture")
            # The entry's modification time on the monotonic clock: qactd's write.
            written = time.monotonic() - (time.time() - os.stat(self.exported).st_mtime) if os.path.exists(self.exported) else None
            seen = state.get("seen") or time.monotonic()
            into.append({"step": name, "expected": expected, "gone": gone, "polls": state["polls"],
                         "menu": [line[0] for line in state.get("lines", [])], "counts": state.get("counts"),
                         "seconds": round(seen - changed_at, 2), "sinceWrite": round(seen - written, 2) if written else None,
                         "notBefore": round(state["notBefore"] - changed_at, 2) if "notBefore" in state else None})

    def menu_step(self, name, expected, gone, changed_at, into=None):
        """The task manager's menu of the app, opened a few times a second (a poll whose menu
        looks as the one before is not read again)."""
        def read(stale):
            lines, picture = self.read_menu(self.launcher_point(), self.menu_area(), stale=stale)
            return lines, picture, self.opened_at, self.drawn_at

        self.step(self.steps if into is None else into, name, expected, gone, changed_at, read, STEP_TIMEOUT, "task manager")

    def kickoff_step(self, name, expected, gone, changed_at):
        """Kickoff's menu of the app found by its search, opened afresh at each poll: within one
        opening, Kickoff's results keep the actions they had. What a search shows is Kickoff's
        state when it ran, between Kickoff's opening and its results showing the app: those
        are a poll's moments, not the reading of the menu after it (a poll takes a few seconds)."""
        def read(stale):
            lines = self.kickoff_search()
            return lines, None, self.searched_at, self.results_at

        self.step(self.kickoff, name, expected, gone, changed_at, read, STEP_TIMEOUT * 3)

    def activate_kickoff(self):
        """Opens Kickoff and returns its popup's rectangle once it is on the screen."""
        opened = self.call("org.kde.plasmashell", "/PlasmaShell", "org.kde.PlasmaShell", "activateLauncherMenu")
        if opened.returncode != 0:
            raise Failure("activateLauncherMenu: " + opened.stderr.strip())
        return wait_for("Kickoff to open", self.kickoff_window, timeout=30, interval=0.1)

    def kickoff_window(self):
        """Kickoff's popup while it is on the screen: the rectangle of the visible plasmashell
        window that is neither the desktop (the whole screen) nor the panel, nor a menu."""
        for window in subprocess.run(["xdotool", "search", "--onlyvisible", "--class", "plasmashell"], env=self.env,
                                     capture_output=True, text=True).stdout.split():
            geometry = subprocess.run(["xdotool", "getwindowgeometry", "--shell", window], env=self.env,
                                      capture_output=True, text=True).stdout
            values = dict(line.split("=", 1) for line in geometry.split())
            box = tuple(int(values.get(key, 0)) for key in ["X", "Y", "WIDTH", "HEIGHT"])
            if 400 <= box[2] < WIDTH and box[3] >= 300:
                margin = self.plasma["popupMargin"]
                return (box[0] + margin, box[1] + margin, box[2] - 2 * margin, box[3] - 2 * margin)
        return None

    def close_kickoff(self):
        if self.kickoff_window():
            self.call("org.kde.plasmashell", "/PlasmaShell", "org.kde.PlasmaShell", "activateLauncherMenu")
        wait_for("Kickoff to close", lambda: not self.kickoff_window(), timeout=10)

    def kickoff_search(self, keep_open=False):
        """Kickoff's menu for the app found by its search (`kickoff_search_once`). Keys typed while
        Kickoff's search field is still taking focus can be lost, so the search never shows the
        app: Kickoff is closed and opened again, at most three times, before that is a failure."""
        for attempt in range(3):
            try:
                return self.kickoff_search_once(keep_open)
            except Failure as failure:
                if attempt == 2 or "Kickoff's search results" not in str(failure):
                    raise
                self.kickoff_retries += 1

    def kickoff_search_once(self, keep_open):
        """Opens Kickoff, searches for the app, right-clicks its entry and reads the menu that
        opens. Returns the menu's lines; Kickoff is closed again unless `keep_open` (the menu open
        too). Sets `searched_at`, before Kickoff was opened, and `results_at`, when its results
        were seen showing the app."""
        self.close_kickoff()
        try:
            self.searched_at = time.monotonic()
            popup = self.activate_kickoff()
            # Below Kickoff's header, whose search field's cursor blinks: its pages, then the
            # search results, which fill its upper part. Keys are typed once Kickoff is drawn
            # (fewer are lost), and the results read by tesseract each time they have changed
            # and settled (tesseract takes a second or more, a shot less).
            # tesseract reads the results with the header above them, not alone.
            body = (popup[0], popup[1] + KICKOFF_HEADER, popup[2], popup[3] - KICKOFF_HEADER)
            self.settled(body, "kickoff.png")
            results = body[:3] + (110,)
            left = self.plasma["kickoffTextLeft"]
            reading = (popup[0] + left, popup[1], popup[2] - left, KICKOFF_HEADER + results[3])
            last = [open(self.screenshot("kickoff-results.png", results), "rb").read()]
            subprocess.run(["xdotool", "type", "--delay", "20", "qactd"], env=self.env, check=True)

            def entry():
                try:
                    last[0] = self.settled(results, "kickoff-results.png", lambda shot: shot != last[0])
                except Failure:
                    return None
                self.results_at = self.settled_at
                return [line[1] for line in self.read_lines(self.screenshot("kickoff-reading.png", reading), reading[:2], 2,
                                                            "-normalize", MENU_GAP) if matches(line[0], "qactd Demo")]

            found = wait_for("the app in Kickoff's search results", entry, timeout=10, interval=0)[0]
            # The entry is right-clicked at the right of its row, past its text: its menu opens
            # there, below and right of the pointer, over nothing else to read. The search
            # field above, whose cursor blinks, is left out.
            point = (popup[0] + popup[2] - KICKOFF_MENU_WIDTH, found[1])
            area = (point[0], point[1] - 5, KICKOFF_MENU_WIDTH, popup[1] + popup[3] - point[1] + 5)
            return self.read_menu(point, area, hover=True, keep_open=keep_open, scale=2)[0]
        finally:
            if not keep_open:
                self.close_kickoff()

    def app_entry(self, command, wait=False):
        """Gives the app's own entry the command line `command`; with `wait`, waits until qactd's
        copy has it."""
        source = self.path("share/applications/" + DESKTOP_ID)
        with open(source) as entry:
            lines = [("Exec=%s\n" % command) if line.startswith("Exec=") else line for line in entry]
        with open(source + ".tmp", "w") as entry:
            entry.writelines(lines)
        os.rename(source + ".tmp", source)
        if not wait:
            return
        wait_for("the copy to take the app's command", lambda: ("\nExec=%s\n" % command) in open(self.exported).read(),
                 timeout=10)
        # KDE's service cache has it before the click: kded would rebuild it a second or two
        # later; here the rebuild is run at once, so the click launches the new command.
        subprocess.run(self.in_shell_root([self.plasma["sycoca"]]), env=self.env, capture_output=True, check=True)

    def session_processes(self):
        """The processes running with this session's HOME, whoever started them: {pid: arguments}."""
        found = {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if "HOME=%s\0" % self.env["HOME"] in open("/proc/%s/environ" % pid).read():
                    found[int(pid)] = open("/proc/%s/cmdline" % pid).read().split("\0")
            except OSError:
                pass
        return found

    def windows(self):
        """The gtk-window.py processes of this session: {pid: title}."""
        return {pid: arguments[arguments.index("--title") + 1] for pid, arguments in self.session_processes().items()
                if "--title" in arguments[:-1]}

    def stop(self):
        """Stops what was started, then what plasmashell started and left running (a KIO
        worker for the desktop's folder has outlived it)."""
        super().stop()
        for pid in self.session_processes():
            try:
                os.kill(pid, 15)
            except OSError:
                pass

    def launch_window(self, title):
        """Left-clicks the launcher until the window titled `title` shows, and returns its process.
        A click before plasmashell has read the rewritten entry runs the previous command: that
        window is closed and the launcher clicked again."""
        def launched():
            for pid, other in self.windows().items():
                if other != title:
                    os.kill(pid, 15)
            mine = [pid for pid, other in self.windows().items() if other == title]
            if mine and subprocess.run(["xdotool", "search", "--onlyvisible", "--name", title], env=self.env,
                                       capture_output=True).returncode == 0:
                return mine[0]
            if not mine and time.monotonic() - last[0] > 3:
                subprocess.run(["xdotool", "key", "Escape"], env=self.env)
                subprocess.run(["xdotool", "mousemove", *map(str, self.launcher_point()), "click", "1"], env=self.env, check=True)
                last[0] = time.monotonic()
            return None

        last = [0.0]
        return wait_for("the app's window '%s'" % title, launched, timeout=30, interval=0.2)

    def panel_entries(self, title):
        """The task manager's entries that show `title` (one word), each as the x of its left edge."""
        area = (self.panel["X"], self.panel["Y"], self.panel["WIDTH"] // 2, self.panel["HEIGHT"])
        # The selected entry's light blue reads best as black on white.
        lines = self.read_lines(self.screenshot("panel.png", area), area[:2], 2, "-threshold 50%", MENU_GAP)
        return [left for line in lines for word, left in line[2] if matches(word, title)]

    def grouped(self, title):
        """Whether the window titled `title` is the launcher's entry: its text is the only one and
        starts at the panel's left end (a window the task manager could not match to the launcher
        gets an entry of its own after the launcher's icon)."""
        entries = wait_for("the window's entry in the task manager", lambda: self.panel_entries(title), timeout=10, interval=0)
        # The launcher's icon is as wide as the panel is high; the entry's own icon narrower.
        return {"entries": len(entries), "left": entries[0], "grouped": len(entries) == 1 and entries[0] < self.panel["HEIGHT"] * 1.5}

    def window_case(self, name, arguments, uid):
        """Starts the app's window from the launcher (a left click) with the entry's Exec running
        gtk-window.py `arguments`, reads its entry, rewrites the entry (a favorite added), reads it
        again, and closes the window. Returns the case's report."""
        title, command = window_command(name, arguments)
        self.app_entry(command, wait=True)
        case = {"case": name, "exec": command}
        pid = self.launch_window(title)
        window = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", title], env=self.env, capture_output=True,
                                text=True).stdout.split()[0]
        case["properties"] = subprocess.run(["xprop", "-id", window, "WM_CLASS", "_GTK_APPLICATION_ID"], env=self.env,
                                         capture_output=True, text=True).stdout.strip().splitlines()
        try:
            case["before"] = self.grouped(title)
            self.contact(uid, "Aaron Window")
            self.wait_listed(lambda titles: "Aaron Window" in titles)
            wait_for("the rewritten entry", lambda: "Name=Aaron Window" in open(self.exported).read(), timeout=10)
            case["after"] = self.grouped(title)
            os.unlink(self.path("contacts/personal/%s.vcf" % uid))
            self.wait_listed(lambda titles: "Aaron Window" not in titles)
        finally:
            os.kill(pid, 15)
        # Under load (12 on 2 cores) the entry was once still shown 10 s after the process ended.
        wait_for("the window to close", lambda: not self.panel_entries(title), timeout=30, interval=0)
        return case

    def face_step(self, faces, changed_at):
        """With FavoriteFaces=`faces` ("yes" or "no", set in the configuration and reloaded) and
        the favorite FACE_NAME's photo one solid colour, right-clicks the launcher until its menu
        shows FACE_NAME and, left of the name on its row (where a menu draws an action's icon),
        the photo's colour (yes) or none of it (no). Returns what was read."""
        self.configure(DESKTOP_ID, None, "Recompute=change\nRecomputeSettleMSec=0\n[Launcher]\nFavoriteFaces=%s\n" % faces)
        self.qactl("reload")
        wait_for("the entry's action icon for FavoriteFaces=%s" % faces,
                 lambda: ("/qactd/faces/" in face_icon(self.exported)) == (faces == "yes"), timeout=10)
        point = self.launcher_point()
        last = {}

        def shown():
            area = self.menu_area()
            lines, last["picture"] = self.read_menu(point, area, stale=last.get("picture"), keep_open=True)
            try:
                if lines is None:
                    return False
                rows = [line for line in lines if matches(line[0], FACE_NAME)]
                if len(rows) != 1:
                    last["menu"] = [line[0] for line in lines]
                    return False
                # tesseract may read the icon as letters too: the name starts at its first word.
                first = FACE_NAME.split()[0]
                text_left = min([left for word, left in rows[0][2] if matches(word, first)] or [rows[0][2][0][1]])
                middle = rows[0][1][1]
                # From the menu's left edge (the menu's area starts 40 px left of the point) to the text.
                left = max(0, point[0] - 40)
                strip = self.pixels(left, middle - 12, max(1, text_left - left), 25)
                last["facePixels"] = sum(1 for i in range(0, len(strip) - 2, 3)
                                         if all(abs(strip[i + c] - FACE_COLOUR[c]) <= 48 for c in range(3)))
                last["row"] = {"text": rows[0][0], "textLeft": text_left, "y": middle, "stripLeft": left}
                last["shape"] = icon_shape(strip, max(1, text_left - left), 25, FACE_COLOUR)
                held = (last["facePixels"] >= FACE_PIXELS) == (faces == "yes")
                if held:
                    self.screenshot("face-%s.png" % faces)
                return held
            finally:
                self.close_menu(area, last["picture"], away=self.plasma["launcherTooltip"])

        seen = None
        try:
            wait_for("the menu's row of %s to %s the photo's colour" % (FACE_NAME, "show" if faces == "yes" else "not show"),
                     shown, timeout=STEP_TIMEOUT, interval=0)
            seen = self.drawn_at
        finally:
            self.faces.append({"faces": faces, "facePixels": last.get("facePixels"), "shape": last.get("shape"), "row": last.get("row"),
                               "menu": last.get("menu"), "icon": face_icon(self.exported),
                               "seconds": round((seen or time.monotonic()) - changed_at, 2)})

    def stop_daemon(self):
        """Stops qactd and removes its copy of the entry: its next start exports it again, a
        first export."""
        for process in self.processes:
            if process.args[0] == os.path.join(self.bin, "qactd") and process.poll() is None:
                process.terminate()
                process.wait(timeout=10)
        os.unlink(self.exported)

    def wait_listed(self, condition):
        wait_for("qactl list to follow the contacts", lambda: condition(self.displayed()), timeout=10, interval=0.02)


# The favorite whose photo is one solid colour, a colour no icon theme draws in a menu, and how
# many of the photo's pixels beside the name make a face (a 16 px round icon has about 200).
FACE_UID, FACE_NAME = "zz-face", "Aaron Face"
FACE_COLOUR = (0xE0, 0x10, 0xB0)
FACE_PIXELS = 40


def face_icon(exported):
    """The Icon= of FACE_UID's action in the exported entry ("" when there is none)."""
    group, icon = False, ""
    with open(exported) as entry:
        for line in entry:
            if line.startswith("["):
                group = line.strip() == "[Desktop Action qactd-FavoriteAction-%s]" % FACE_UID
            elif group and line.startswith("Icon="):
                icon = line[5:].strip()
    return icon


APP_ID = DESKTOP_ID[:-len(".desktop")]
# How the task manager can know the app's window: WM_CLASS only, the GTK application ID only,
# neither (then only the process's command line names the entry).
WINDOW_CASES = [("wm class", "--program " + APP_ID, "zz-window-1"),
                ("application id", "--program qactd-window --application-id " + APP_ID, "zz-window-2"),
                ("command line", "--program qactd-window", "zz-window-3")]


def changes(session, measure):
    """Starts qactd (the first export), then adds a favorite, renames it and removes it: after
    each, `measure(step, expected, gone, changed_at)` reads a menu until it shows the displayed
    items (`qactl list`) and none of `gone`."""
    session.start_daemon()
    session.qactl("resign-active")
    wait_for("the exported desktop entry", lambda: os.path.exists(session.exported), interval=0.01)
    measure("first export", session.displayed(), [], time.monotonic())

    changed = time.monotonic()
    session.contact("zz-new-favorite", "Aaron Added")
    session.wait_listed(lambda titles: "Aaron Added" in titles)
    measure("favorite added", session.displayed(), [], changed)

    changed = time.monotonic()
    session.contact("zz-new-favorite", "Aaron Renamed")
    session.wait_listed(lambda titles: "Aaron Renamed" in titles and "Aaron Added" not in titles)
    measure("favorite renamed", session.displayed(), ["Aaron Added"], changed)

    changed = time.monotonic()
    os.unlink(session.path("contacts/personal/zz-new-favorite.vcf"))
    session.wait_listed(lambda titles: "Aaron Renamed" not in titles)
    measure("favorite removed", session.displayed(), ["Aaron Added", "Aaron Renamed"], changed)


def pick(session, where, menu, choice, into):
    """Clicks `choice` in the open menu read as `menu` (a Qt menu), and waits until the daemon
    has its trigger; the report goes `into`."""
    hits = [line for line in menu if matches(line[0], choice)]
    if not hits:
        subprocess.run(["xdotool", "key", "Escape"], env=session.env)
        raise Failure("'%s' is not in %s's menu: %s" % (choice, where, [line[0] for line in menu]))
    session.choose(into, hits[0][1], choice, selects_first=False)


def window_command(name, arguments):
    """The window's title and the app entry's Exec that opens it."""
    title = "qactd-window-%s" % name.replace(" ", "")
    return title, "/usr/bin/python3 %s %s --title %s" % (os.path.join(REPOSITORY, "Tests/integration/gtk-window.py"),
                                                         arguments, title)


def matches(line, title):
    """A menu line shows `title`: the same letters, up to an OCR slip."""
    line, title = folded(line), folded(title)
    if not line or not title:
        return False
    return line == title or (len(line) <= len(title) + 3 and difflib.SequenceMatcher(None, line[-len(title):], title).ratio() >= 0.85)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (logs, screenshots)")
    parser.add_argument("--root", metavar="DIR", help="run Plasma in this Debian root (Tests/integration/debian-root.sh), "
                        "the rest here")
    arguments = parser.parse_args()
    root = os.path.abspath(arguments.root) if arguments.root else None
    version = plasma_version(root)
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if version is None:
        missing.append("Plasma (kded5 or kded6) in %s" % (root or "/"))
    else:
        shell_tools = ["/usr/bin/plasmashell", "/usr/bin/kwin_x11"] + [PLASMA[version][name] for name in ["sycoca", "shortcuts", "activities"]]
        missing += [tool for tool in shell_tools if not os.path.exists(os.path.join(root or "/", tool.lstrip("/")))]
    if root and os.geteuid() != 0:
        missing.append("root (to run Plasma in %s)" % root)
    if missing:
        print(json.dumps({"ok": False, "error": "missing: " + " ".join(missing)}))
        return 77

    session = Session(os.path.abspath(arguments.bin), root, version)
    session.steps = []
    session.kickoff = []
    session.faces = []
    session.pictures = {}
    session.closed = {}
    session.kickoff_retries = 0
    session.menus_missed = 0
    session.hovered = 0
    report = {"ok": False, "plasma": version, "folder": session.root, "steps": session.steps, "kickoff": session.kickoff, "faces": session.faces}
    try:
        session.prepare()
        # The app's command opens the first case's window from the start: a click on the
        # launcher never runs `qactl app`, which would connect as the app.
        session.app_entry(window_command(*WINDOW_CASES[0][:2])[1])
        session.start_display(WIDTH, HEIGHT)
        session.start_private_buses()
        session.start_plasma()
        report["startSeconds"] = session.start_seconds
        # Kickoff: after each change, Kickoff is opened and searched until its menu shows it.
        # plasmashell builds Kickoff's popup and loads its search the first time it is used
        # (seconds here): that is done once before the daemon starts, as any session has by the
        # time a person uses it, and shows the app's own entry, without the quick actions.
        before = session.kickoff_search()
        changes(session, session.kickoff_step)
        report["kickoffBefore"] = {"menu": [line[0] for line in before], "counts": {
            title: sum(1 for line in before if matches(line[0], title)) for title in session.kickoff[0]["expected"]}}
        # Picked in Kickoff's menu, an item runs its Exec, `qactl trigger` (a static item: a favorite
        # picked would rank first and keep the favorites the window cases add out of the menu).
        menu = session.kickoff_search(keep_open=True)
        pick(session, "Kickoff", menu, "Share", report.setdefault("kickoffPick", {}))
        session.close_kickoff()
        # The task manager: the same changes again from the start, its menu opened a few times
        # a second. Before the daemon starts again, the menu shows none of the items.
        everything = session.displayed() + ["Aaron Added", "Aaron Renamed"]
        session.stop_daemon()
        report["before"] = []
        session.menu_step("no export", [], everything, time.monotonic(), report["before"])
        changes(session, session.menu_step)
        menu = wait_for("the task manager's menu to open", lambda: session.read_menu(
            session.launcher_point(), session.menu_area(), keep_open=True)[0], timeout=STEP_TIMEOUT, interval=0)
        pick(session, "the task manager", menu, "Ada Lovelace", report)
        # Windows and their launcher: known by WM_CLASS only, by the GTK application ID only,
        # by neither (the command line).
        report["windows"] = [session.window_case(*case) for case in WINDOW_CASES]
        # The control: a window the task manager cannot match to the entry (its WM_CLASS, no
        # application ID, a command line not the entry's), started by the test, must show as an
        # entry of its own after the launcher, or the reading above proves nothing.
        title, command = window_command("stranger", "--program qactd-stranger")
        stranger = session.start(command.split(), "stranger.log")
        report["control"] = session.grouped(title)
        stranger.terminate()
        if report["control"]["grouped"]:
            raise Failure("a window the task manager cannot match read as grouped: %s" % report["control"])
        split = [case["case"] for case in report["windows"] if not (case["before"]["grouped"] and case["after"]["grouped"])]
        if split:
            raise Failure("a window has an entry of its own beside its launcher: %s" % split)
        # Faces: a favorite with a photo of one colour; the menu shows that colour beside its
        # name only with FavoriteFaces=yes (the control first: no).
        session.face_contact(FACE_UID, FACE_NAME, FACE_COLOUR)
        session.wait_listed(lambda titles: FACE_NAME in titles)
        session.face_step("no", time.monotonic())
        session.face_step("yes", time.monotonic())
        report["ok"] = True
    except (Failure, subprocess.CalledProcessError, OSError, ValueError) as error:
        report["error"] = str(error)
    finally:
        report["kickoffRetries"] = session.kickoff_retries
        report["menusMissed"] = session.menus_missed
        report["launcherHovered"] = session.hovered
        session.finish(report, arguments.keep)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
