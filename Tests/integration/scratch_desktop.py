"""A scratch desktop for the launcher scripts (plank-dock.py, gnome-shell.py, plasma.py): a folder
with a HOME and XDG folders of its own, the built qactd on the demo contacts and static items
exporting the demo app's desktop entry, and the processes started there, stopped at the end; an
Xvfb display, private buses, and screenshots read with tesseract."""
import difflib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unicodedata

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DESKTOP_ID = "io.qactd.Demo.desktop"


# A bus of our own that activates nothing: a shell's helpers (calendar server, a11y bus,
# permission store, ...) are not started, so nothing outlives the test.
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
# OCR upscales a screenshot first: tesseract reads menu-sized text far better at 3x.
SCALE = 3


class Failure(Exception):
    pass


def pil_missing():
    """["python3-pil (PIL)"] when PIL, which makes the faces' photos and reads screenshots'
    pixels, cannot be imported; else []."""
    try:
        import PIL.Image  # noqa: F401
    except ImportError:
        return ["python3-pil (PIL)"]
    return []


def folded(text):
    """Letters and digits only, accents dropped, lower case: what OCR gets right reliably."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(character.lower() for character in decomposed if character.isalnum() and not unicodedata.combining(character))


def matches(line, title):
    """A menu line shows `title`: the same letters, up to an OCR slip (ö read as é, a lost letter)."""
    line, title = folded(line), folded(title)
    if not line or not title:
        return False
    # An icon read as a letter or two may stand before the title.
    return title in line or difflib.SequenceMatcher(None, line[-len(title):], title).ratio() >= 0.8


def icon_shape(strip, width, height, colour, tolerance=48):
    """Where `colour` is drawn in `strip` (raw RGB bytes, `width` x `height`) and its shape: the
    box around its pixels, how many of the 3x3 pixels at the box's centre have the colour and how
    many of the 2x2 pixels at each of the box's four corners do (a round icon leaves its corners
    to the background, a square one fills them), and the part of the box the colour fills (a
    circle about 0.79, a square 1). None when the colour is not there."""
    def has_colour(x, y):
        offset = (y * width + x) * 3
        return all(abs(strip[offset + c] - colour[c]) <= tolerance for c in range(3))
    found = [(x, y) for y in range(height) for x in range(width) if has_colour(x, y)]
    if not found:
        return None
    left, right = min(x for x, _ in found), max(x for x, _ in found)
    top, bottom = min(y for _, y in found), max(y for _, y in found)
    middle_x, middle_y = (left + right) // 2, (top + bottom) // 2
    centre = sum(1 for x in range(middle_x - 1, middle_x + 2) for y in range(middle_y - 1, middle_y + 2) if has_colour(x, y))
    corners = sum(1 for corner_x, step_x in ((left, 1), (right, -1)) for corner_y, step_y in ((top, 1), (bottom, -1))
                  for x in (corner_x, corner_x + step_x) for y in (corner_y, corner_y + step_y) if has_colour(x, y))
    area = (right - left + 1) * (bottom - top + 1)
    return {"box": [left, top, right - left + 1, bottom - top + 1], "centre": centre, "corners": corners,
            "fill": round(len(found) / area, 3)}


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
        # The Debian root the desktop's shell runs in (in_shell_root), None for this system.
        self.shell_root = None
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

    def in_shell_root(self, arguments):
        """`arguments` as run where the desktop's shell is: this system's, or the Debian root
        `shell_root` (Tests/integration/in-root), with the scratch folder bound at its own path so
        that the buses, the HOME and qactd's exports are the same files on both sides, and
        read-only the built binaries and the test scripts (the Execs of the app's entry: qactl,
        gtk-window.py), which the shell runs there."""
        if not self.shell_root:
            return arguments
        # The binaries under both their names: the one given (.build/debug, a symbolic link) and
        # the one qactd writes in the Execs it exports, its own resolved path.
        binaries = ["--ro", self.bin] + (["--ro", os.path.realpath(self.bin)] if os.path.realpath(self.bin) != self.bin else [])
        return [os.path.join(REPOSITORY, "Tests/integration/in-root"), self.shell_root, "--bind", self.root, *binaries,
                "--ro", os.path.join(REPOSITORY, "Tests/integration"), "--", *arguments]

    def root_path(self, path):
        """`path` of the system the shell runs on."""
        return os.path.join(self.shell_root, path.lstrip("/")) if self.shell_root else path

    def start(self, arguments, log, **options):
        handle = open(self.path(log), "wb")
        process = subprocess.Popen(arguments, env=self.env, stdout=handle, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, **options)
        self.processes.append(process)
        return process

    def start_display(self, width=1024, height=768):
        """Xvfb on a display number of its own choosing; sets DISPLAY."""
        read_end, write_end = os.pipe()
        self.start(["Xvfb", "-displayfd", str(write_end), "-screen", "0", "%dx%dx24" % (width, height), "-nolisten", "tcp"],
                   "xvfb.log", pass_fds=[write_end])
        os.close(write_end)
        with os.fdopen(read_end) as pipe:
            number = pipe.readline().strip()
        if not number:
            raise Failure("Xvfb did not start: " + open(self.path("xvfb.log")).read())
        self.env["DISPLAY"] = ":" + number

    def start_private_buses(self):
        """A private session bus and a second private bus standing in for the system bus, neither
        activating anything; sets their addresses."""
        for name, variable in [("bus", "DBUS_SESSION_BUS_ADDRESS"), ("system-bus", "DBUS_SYSTEM_BUS_ADDRESS")]:
            socket = self.path(name)
            with open(self.path(name + ".conf"), "w") as config:
                config.write(BUS_CONFIG % socket)
            self.start(["dbus-daemon", "--config-file=" + self.path(name + ".conf"), "--nofork", "--nopidfile"], name + ".log")
            wait_for("the private " + name, lambda: os.path.exists(socket))
            self.env[variable] = "unix:path=" + socket

    def screenshot(self, name, area=None):
        """The screen, or the rectangle `area` (x, y, width, height) of it, into `name`."""
        shot = self.path(name)
        crop = ["-crop", "%dx%d+%d+%d" % (area[2], area[3], area[0], area[1])] if area else []
        subprocess.run(["import", "-display", self.env["DISPLAY"], "-window", "root", *crop, shot], env=self.env,
                       check=True, capture_output=True)
        return shot

    def pixels(self, x, y, width, height):
        """The screen's raw RGB bytes in a rectangle, one byte a channel (import would give the
        display's 16 bits a channel otherwise)."""
        return subprocess.run(["import", "-display", self.env["DISPLAY"], "-window", "root",
                               "-crop", "%dx%d+%d+%d" % (width, height, x, y), "-depth", "8", "rgb:-"],
                              env=self.env, check=True, capture_output=True).stdout

    def choose(self, report, point, title, selects_first=True):
        """Clicks the open menu's item `title` at `point` (click_item) and waits until the daemon
        has that item's trigger (no app is connected: the pending launch item)."""
        self.click_item(point, title, selects_first)
        # A pending item of an earlier choice may be there already: the one chosen replaces it.
        last = {}

        def triggered():
            last["pending"] = self.status().get("pendingLaunchItem") or {}
            return last["pending"].get("title") == title

        report["chosen"] = title
        try:
            wait_for("the trigger of '%s'" % title, triggered, timeout=10)
        finally:
            report["pending"] = last.get("pending")

    def click_item(self, point, title, selects_first=True):
        """Clicks the open menu's item `title` at `point`.
        A GTK menu (`selects_first`) takes a click on an item only once it has selected the item
        under the pointer, which it shows by highlighting the row: a strip of the row left of the
        pointer (the pointer itself never in it) must change before the click. A Qt menu takes
        the click where it lands (and under Xvfb shows no highlight)."""
        x, y = point
        if selects_first:
            strip = (max(0, x - 40), max(0, y - 2), 36, 1)
            unselected = self.pixels(*strip)
            subprocess.run(["xdotool", "mousemove", str(x), str(y)], env=self.env, check=True)
            wait_for("'%s' to show as selected under the pointer" % title,
                     lambda: self.pixels(*strip) != unselected, timeout=10, interval=0.05)
        subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"], env=self.env, check=True)

    def read_lines(self, shot, origin=(0, 0), scale=SCALE, contrast="", gap=None):
        """tesseract's words grouped into lines: [(text, (x, y) centre, [(word, left edge x)])] in
        screen pixels, the shot taken at `origin` on the screen. Words are grouped by their height
        on screen, not by tesseract's own lines, which sometimes cut one menu item in two; with
        `gap`, words further apart than that many pixels start a line of their own. `contrast`:
        more of ImageMagick's options for the grey image tesseract reads."""
        large = shot + ".ocr.png"
        subprocess.run(["convert", shot, "+repage", "-resize", "%d%%" % (scale * 100), "-colorspace", "Gray",
                        *contrast.split(), large], check=True)
        tsv = subprocess.run(["tesseract", large, "-", "--psm", "11", "tsv"], capture_output=True, text=True).stdout
        words = []
        for row in tsv.splitlines()[1:]:
            cells = row.split("\t")
            if len(cells) < 12 or not cells[11].strip():
                continue
            left, top, width, height = (int(value) for value in cells[6:10])
            words.append((top + height / 2, left, width, height, cells[11]))
        words.sort()
        lines = []
        for word in words:
            if lines and abs(word[0] - lines[-1][-1][0]) < max(word[3], lines[-1][-1][3]) / 2 \
                    and (gap is None or word[1] - max(other[1] + other[2] for other in lines[-1]) < gap * scale):
                lines[-1].append(word)
            else:
                lines.append([word])
        result = []
        for line in lines:
            line.sort(key=lambda word: word[1])
            text = " ".join(word[4] for word in line)
            left = min(word[1] for word in line)
            right = max(word[1] + word[2] for word in line)
            middle = sum(word[0] for word in line) / len(line)
            result.append((text, (origin[0] + int((left + right) / 2 / scale), origin[1] + int(middle / scale)),
                           [(word[4], origin[0] + int(word[1] / scale)) for word in line]))
        return result

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

    def contact(self, uid, name, favorite=True):
        """Writes (whole, by a rename) the demo book's card `uid`, a favorite or not."""
        path = self.path("contacts/personal/%s.vcf" % uid)
        with open(path + ".tmp", "w") as card:
            card.write("BEGIN:VCARD\nVERSION:4.0\nUID:%s\nFN:%s\nN:%s;;;;\nCATEGORIES:%s\nEND:VCARD\n"
                       % (uid, name, name, "favorite" if favorite else "friends"))
        os.rename(path + ".tmp", path)

    def face_contact(self, uid, name, colour):
        """Writes the demo book's favorite `uid` with a photo of one solid colour (an (r, g, b)
        tuple), a real PNG made by Pillow, inline as vCard 4.0 has it; returns the PNG's bytes."""
        import base64
        import io

        from PIL import Image

        buffer = io.BytesIO()
        Image.new("RGB", (96, 96), colour).save(buffer, "PNG")
        path = self.path("contacts/personal/%s.vcf" % uid)
        with open(path + ".tmp", "w") as card:
            card.write("BEGIN:VCARD\nVERSION:4.0\nUID:%s\nFN:%s\nN:%s;;;;\nCATEGORIES:favorite\n"
                       "PHOTO:data:image/png;base64,%s\nEND:VCARD\n"
                       % (uid, name, name, base64.b64encode(buffer.getvalue()).decode()))
        os.rename(path + ".tmp", path)
        return buffer.getvalue()

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

    def configure(self, desktop_file, mode, shortcuts="", launcher=""):
        """`mode`: DynamicItems=, None for the default; `shortcuts`, `launcher`: more lines for
        [Shortcuts] and [Launcher]."""
        dynamic_items = "" if mode is None else "DynamicItems=%s\n" % mode
        with open(self.path("qactd.conf"), "w") as configuration:
            configuration.write("[Contacts]\nDirectory=contacts\n[Shortcuts]\nStaticItems=shortcuts.plist\n%s"
                                "[Launcher]\nDesktopFile=%s\n%s%s[Daemon]\nSocket=%s\n"
                                % (shortcuts, desktop_file, dynamic_items, launcher, self.env["QACTD_SOCKET"]))

    def photo(self, uid, rgb, image_format="JPEG"):
        """Gives the demo card `uid` a photo of one solid colour (made with PIL, inline as vCard
        3.0 has it), written whole by a rename."""
        import base64
        import io
        from PIL import Image
        data = io.BytesIO()
        Image.new("RGB", (64, 64), rgb).save(data, image_format)
        path = self.path("contacts/personal/%s.vcf" % uid)
        with open(path) as card:
            lines = [line for line in card.read().splitlines() if line and not line.startswith("PHOTO") and line != "END:VCARD"]
        lines.append("PHOTO;ENCODING=b;TYPE=%s:%s" % (image_format, base64.b64encode(data.getvalue()).decode()))
        with open(path + ".tmp", "w") as card:
            card.write("\n".join(lines + ["END:VCARD", ""]))
        os.rename(path + ".tmp", path)

    def monogram_colours(self):
        """The colour of each monogram among the faces the daemon made ({initials: (r, g, b)})."""
        import re
        folder = self.env["XDG_DATA_HOME"] + "/qactd/faces/" + DESKTOP_ID
        colours = {}
        for name in os.listdir(folder) if os.path.isdir(folder) else []:
            if not name.endswith(".svg"):
                continue  # a photo's face, a PNG
            with open(os.path.join(folder, name)) as face:
                svg = face.read()
            found = re.search(r'<circle[^>]*fill="#([0-9a-f]{6})".*>([^<>]+)</text>', svg)
            if found:
                colours[found.group(2)] = tuple(int(found.group(1)[i:i + 2], 16) for i in (0, 2, 4))
        return colours

    def colour_beside(self, point, colour, shot, width=150, height=16, tolerance=40):
        """How many pixels of `colour` the row at `point` (a text's centre) shows in the `width`
        pixels left of it, where a menu draws an item's icon, in the screenshot `shot` (read with
        PIL)."""
        from PIL import Image
        x, y = point
        left, top = max(0, x - width), max(0, y - height // 2)
        raw = Image.open(shot).convert("RGB").crop((left, top, x, top + height)).tobytes()
        return sum(1 for i in range(0, len(raw) - 2, 3)
                   if all(abs(raw[i + c] - colour[c]) <= tolerance for c in range(3)))

    def shape_beside(self, point, colour, shot, width=150, height=30):
        """The shape (`icon_shape`) `colour` has in the `width` pixels left of the row at `point`,
        where a menu draws an item's icon, in the screenshot `shot`."""
        from PIL import Image
        x, y = point
        left, top = max(0, x - width), max(0, y - height // 2)
        raw = Image.open(shot).convert("RGB").crop((left, top, x, top + height)).tobytes()
        return icon_shape(raw, x - left, height, colour)

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
