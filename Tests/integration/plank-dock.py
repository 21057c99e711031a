#!/usr/bin/python3
"""Plank, a real dock, shows qactd's quick actions and runs the one chosen.

  plank-dock.py --bin DIR --mode auto|quicklist|desktop-entry [--choose TITLE] [--screenshot FILE] [--faces yes|no]
                [--app-items]

Starts, in a scratch folder with a HOME and XDG folders of its own: Xvfb (no window manager), a
private dbus-daemon, the built qactd on the demo contacts with the demo app's desktop entry
exported (DynamicItems=MODE), and Debian's plank with one dock item, the exported entry. The app
resigns active (the favorites become quick actions); then the script right-clicks the dock icon
with xdotool, screenshots the screen with ImageMagick's import and reads it with tesseract: every
displayed quick action (qactl list) must be in the menu exactly once. With --choose it clicks
that item where tesseract found it and waits until the daemon counts the trigger. With
--screenshot it saves the dock and its open menu (make screenshot: docs/dock.png).

With --faces (FavoriteFaces=yes or no), Ada Lovelace's card has a photo of pure magenta (a JPEG made
with PIL) and Arnold Schönberg's none: the menu's rows are read as a person sees them, counting the
pixels of magenta and of Arnold's monogram colour (from the face the daemon made) left of each
name, where the menu draws an item's icon ("faces": {title: {"magenta", "monogram"}}), and the
shape of the magenta there ("photoShape", scratch_desktop.icon_shape: round). With
--faces no there is no face to take the monogram's colour from: --monogram RRGGBB gives it.

With --app-items the app's own items: before the dock starts, the built example app
(qactd-example-app, as the demo app) connects and publishes its three recent files (DisplayLimit=10,
so they show beside the demo's items); the menu must show each displayed item once, theirs
included, and a click on APP_PICK must reach the running app, which prints the file it opens
("appPicked": its line).

Prints one JSON object: {"ok", "mode", "expected", "found", "chosen", "pending", "faces", "appItems",
"appPicked", "error"}; exits
0 when everything held, 1 otherwise, 77 when a tool is missing.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

from scratch_desktop import DESKTOP_ID, Failure, ScratchDesktop, matches, pil_missing, wait_for

TOOLS = ["Xvfb", "dbus-daemon", "plank", "xdotool", "import", "convert", "tesseract"]
# The example app's recent files (in the scratch folder: names tesseract reads well), its
# items' titles, and the one clicked.
APP_FILES = ["Notes", "Agenda", "Letter"]
APP_ITEMS = ["Open " + name for name in APP_FILES]
APP_PICK = APP_ITEMS[1]
MAGENTA = (255, 0, 255)
PHOTO, NO_PHOTO = "Ada Lovelace", "Arnold Schönberg"


class Session(ScratchDesktop):
    def __init__(self, bin_dir, mode, faces=None, app_items=False):
        super().__init__(bin_dir, "qactd-plank-", {"GSETTINGS_BACKEND": "memory"})
        self.mode = mode
        self.faces = faces
        self.app_items = app_items
        self.dock_started = None
        self.once_after = None

    def prepare(self):
        # auto: the configuration names no DynamicItems=, the default.
        setting = None if self.mode == "auto" else self.mode
        super().prepare(["home/.config/plank/dock1/launchers"], setting)
        if self.faces:
            self.configure(DESKTOP_ID, setting, launcher="FavoriteFaces=%s\n" % self.faces)
            self.photo("ada-lovelace", MAGENTA)
        if self.app_items:
            # Room for the app's three items beside the demo's four.
            self.configure(DESKTOP_ID, setting, shortcuts="DisplayLimit=10\n")

    def start_bus(self):
        socket = self.path("bus")
        self.start(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=unix:path=" + socket], "dbus.log")
        wait_for("the session bus", lambda: os.path.exists(socket))
        self.env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + socket

    def start_daemon(self):
        super().start_daemon()
        self.qactl("resign-active")
        if self.app_items:
            self.start_app()
        self.expected = self.displayed()
        wait_for("the exported desktop entry", lambda: os.path.exists(self.exported))
        if self.mode != "desktop-entry":
            wait_for("the quicklist", lambda: self.status().get("quicklist", {}).get("state") == "on")
        return self.exported

    def start_app(self):
        """The example app, connected as the demo app, publishes its three items: waits until
        it says so and qactl lists them."""
        self.app = self.start([os.path.join(self.bin, "qactd-example-app"), DESKTOP_ID[:-len(".desktop")]]
                              + [self.path(name) for name in APP_FILES], "app.log")
        wait_for("the example app to publish its items", lambda: "published 3 items" in self.app_output(), timeout=15)
        wait_for("qactl list to show the app's items", lambda: all(title in self.displayed() for title in APP_ITEMS))

    def app_output(self):
        if self.app.poll() is not None:
            raise Failure("the example app exited with %s: %s" % (self.app.returncode, open(self.path("app.log")).read()))
        return open(self.path("app.log")).read()

    def start_dock(self, exported):
        with open(self.path("home/.config/plank/dock1/launchers/demo.dockitem"), "w") as item:
            item.write("[PlankDockItemPreferences]\nLauncher=file://%s\n" % exported)
        self.dock_started = time.monotonic()
        self.start(["plank"], "plank.log")

        def dock_window():
            found = subprocess.run(["xdotool", "search", "--onlyvisible", "--class", "plank"], env=self.env,
                                   capture_output=True, text=True).stdout.split()
            for window in found:
                geometry = subprocess.run(["xdotool", "getwindowgeometry", "--shell", window], env=self.env,
                                          capture_output=True, text=True).stdout
                values = dict(line.split("=", 1) for line in geometry.split())
                if int(values.get("WIDTH", 0)) > 20 and int(values.get("HEIGHT", 0)) > 20:
                    return {key: int(values[key]) for key in ["X", "Y", "WIDTH", "HEIGHT"]}
            return None

        self.dock = wait_for("plank's dock window", dock_window)
        # The icon is the dock's only item, in the middle of its window.
        self.icon = (self.dock["X"] + self.dock["WIDTH"] // 2, self.dock["Y"] + self.dock["HEIGHT"] // 2)

    def open_menu(self):
        """Right-clicks the icon until the menu shows every expected title exactly once (the dock
        may still be loading the quicklist, or, with DynamicItems=auto, reading the entry qactd
        rewrote without the favorites once the dock took com.canonical.Unity); returns the lines
        read and how often each title was found, and keeps in `once_after` how long after the
        dock started the menu first showed each once."""
        last = None
        for attempt in range(6):
            subprocess.run(["xdotool", "key", "Escape"], env=self.env)
            subprocess.run(["xdotool", "mousemove", str(self.icon[0]), str(self.icon[1]), "click", "3"], env=self.env, check=True)
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                time.sleep(0.3)
                lines = self.read_lines(self.screenshot("menu.png"))
                found = {title: [line for line in lines if matches(line[0], title)] for title in self.expected}
                last = (lines, found)
                if all(len(places) == 1 for places in found.values()):
                    if self.once_after is None:
                        self.once_after = round(time.monotonic() - self.dock_started, 2)
                    return last
        return last


def read_faces(session, monogram=None):
    """The menu open with every title shown: the magenta of Ada's photo and Arnold's monogram
    colour counted beside each favorite's name. With faces on, the menu is opened again until both
    show (the faces reach the quicklist just after its items), within a deadline."""
    if session.faces == "yes":
        monogram = wait_for("Arnold's monogram among the faces", lambda: session.monogram_colours().get("AS"))
    deadline = time.monotonic() + 10
    while True:
        lines, found = session.open_menu()
        counts = {}
        for title in (PHOTO, NO_PHOTO):
            if not found.get(title):
                raise Failure("'%s' is not in the menu: %s" % (title, [line[0] for line in lines]))
            point = found[title][0][1]
            # Counted in the screenshot the menu was read from.
            shot = session.path("menu.png")
            counts[title] = {"magenta": session.colour_beside(point, MAGENTA, shot=shot),
                             "monogram": session.colour_beside(point, monogram, shot=shot) if monogram else 0}
        # Round: the magenta covers the middle of its box, not its corners.
        session.photo_shape = session.shape_beside(found[PHOTO][0][1], MAGENTA, shot=session.path("menu.png"))
        shown = counts[PHOTO]["magenta"] > 0 and counts[NO_PHOTO]["monogram"] > 0
        if session.faces != "yes" or shown or time.monotonic() >= deadline:
            return lines, found, counts, monogram


def pick_app_item(session, found, report):
    """Clicks APP_PICK in the open menu read as `found` and waits until the running app says it
    opens that file; the app's other lines must name no other file."""
    report["appItems"] = {title: len(found.get(title, [])) for title in APP_ITEMS}
    hits = found.get(APP_PICK)
    if not hits:
        raise Failure("'%s' is not in the menu" % APP_PICK)
    session.click_item(hits[0][1], APP_PICK)
    opened = "opening %s" % session.path(APP_FILES[1])
    try:
        wait_for("the app to open '%s'" % APP_FILES[1], lambda: opened + "\n" in session.app_output(), timeout=10)
    finally:
        report["appPicked"] = [line for line in open(session.path("app.log")).read().splitlines() if line.startswith("opening")]


def crop_for_docs(session, shot, lines, target):
    """The dock and its open menu, with a margin, for the README."""
    points = [line[1] for line in lines] + [session.icon]
    left = max(0, min(x for x, _ in points) - 180)
    right = min(1024, max(x for x, _ in points) + 180)
    top = max(0, min(y for _, y in points) - 40)
    bottom = min(768, session.dock["Y"] + session.dock["HEIGHT"])
    subprocess.run(["convert", shot, "-crop", "%dx%d+%d+%d" % (right - left, bottom - top, left, top), "+repage", target],
                   check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--mode", choices=["auto", "quicklist", "desktop-entry"], required=True)
    parser.add_argument("--choose")
    parser.add_argument("--screenshot")
    parser.add_argument("--faces", choices=["yes", "no"], help="FavoriteFaces=, with a magenta photo on Ada's card")
    parser.add_argument("--monogram", help="RRGGBB: the colour of Arnold's monogram, counted with --faces no")
    parser.add_argument("--app-items", action="store_true", help="the example app publishes three items; one is clicked")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (logs, screenshots)")
    arguments = parser.parse_args()
    missing = [tool for tool in TOOLS if shutil.which(tool) is None] + (pil_missing() if arguments.faces else [])
    if missing:
        print(json.dumps({"ok": False, "error": "missing: " + " ".join(missing)}))
        return 77

    session = Session(os.path.abspath(arguments.bin), arguments.mode, arguments.faces, arguments.app_items)
    report = {"ok": False, "mode": arguments.mode, "folder": session.root}
    try:
        session.prepare()
        session.start_display()
        session.start_bus()
        exported = session.start_daemon()
        report["expected"] = session.expected
        session.start_dock(exported)
        if arguments.faces:
            given = tuple(int(arguments.monogram[i:i + 2], 16) for i in (0, 2, 4)) if arguments.monogram else None
            lines, found, report["faces"], monogram = read_faces(session, given)
            report["monogramColour"] = monogram
            report["photoShape"] = getattr(session, "photo_shape", None)
        else:
            lines, found = session.open_menu()
        report["lines"] = [line[0] for line in lines]
        report["found"] = {title: len(hits) for title, hits in found.items()}
        report["onceAfterSeconds"] = session.once_after
        if arguments.screenshot:
            crop_for_docs(session, session.path("menu.png"), lines, arguments.screenshot)
        wrong = {title: count for title, count in report["found"].items() if count != 1}
        if wrong:
            raise Failure("each displayed quick action must be in the menu exactly once; found %s" % wrong)
        if arguments.choose:
            hits = found.get(arguments.choose)
            if not hits:
                raise Failure("'%s' is not a displayed quick action" % arguments.choose)
            session.choose(report, hits[0][1], arguments.choose)
        if arguments.app_items:
            pick_app_item(session, found, report)
        report["ok"] = True
    except (Failure, subprocess.CalledProcessError, OSError, ValueError) as error:
        report["error"] = str(error)
    finally:
        session.finish(report, arguments.keep)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
