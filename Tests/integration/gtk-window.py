#!/usr/bin/python3
"""A running app as a shell sees one: a GTK 3 window whose application ID is the one given, so
the shell matches it to the desktop entry of that ID. Runs until SIGTERM.

  gtk-window.py APPLICATION_ID
"""
import signal
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gio, GLib, Gtk  # noqa: E402


def main():
    application_id = sys.argv[1]
    # GTK names the Wayland surface's app_id after the application (and the program's name).
    GLib.set_prgname(application_id)
    application = Gtk.Application(application_id=application_id, flags=Gio.ApplicationFlags.NON_UNIQUE)

    def activate(app):
        window = Gtk.ApplicationWindow(application=app, title="qactd test window")
        window.set_default_size(320, 200)
        window.show_all()

    application.connect("activate", activate)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda: application.quit() or GLib.SOURCE_REMOVE)
    return application.run([sys.argv[0]])


if __name__ == "__main__":
    sys.exit(main())
