#!/usr/bin/python3
"""A running app as a shell sees one: a GTK 3 window whose application ID is the one given, so
the shell matches it to the desktop entry of that ID. Runs until SIGTERM.

  gtk-window.py APPLICATION_ID
  gtk-window.py --program NAME [--application-id ID] [--title TITLE]

The second form is for a task manager that matches a window to its launcher by the window's
WM_CLASS (GTK names it after NAME, the program's name; not --class, an option GTK itself takes), by its GTK application ID, or, with
neither naming the entry, by the process's command line: a window without --application-id is
a plain GTK window, with no application ID at all.
"""
import argparse
import signal
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gio, GLib, Gtk  # noqa: E402


def main():
    if len(sys.argv) == 2 and not sys.argv[1].startswith("-"):
        # GTK names the Wayland surface's app_id and X11's WM_CLASS after the program's name.
        program, application_id, title = sys.argv[1], sys.argv[1], "qactd test window"
    else:
        parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.add_argument("--program", required=True)
        parser.add_argument("--application-id")
        parser.add_argument("--title", default="qactd test window")
        arguments = parser.parse_args()
        program, application_id, title = arguments.program, arguments.application_id, arguments.title
    GLib.set_prgname(program)

    def show(app=None):
        window = Gtk.ApplicationWindow(application=app, title=title) if app else Gtk.Window(title=title)
        window.set_default_size(320, 200)
        window.show_all()

    if application_id is None:
        show()
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda: Gtk.main_quit() or GLib.SOURCE_REMOVE)
        Gtk.main()
        return 0
    application = Gtk.Application(application_id=application_id, flags=Gio.ApplicationFlags.NON_UNIQUE)
    application.connect("activate", show)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda: application.quit() or GLib.SOURCE_REMOVE)
    return application.run([sys.argv[0]])


if __name__ == "__main__":
    sys.exit(main())
