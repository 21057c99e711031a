#!/usr/bin/python3
"""A GTK 4 app that publishes its three recent files as quick actions on its icon, and opens
the one a person picks there (while it runs, or when it is started for the pick).

    recent_files.py [DESKTOP-FILE-ID] [FILE...]
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import gi  # noqa: E402

gi.require_version("Gtk", "4.0")
from gi.repository import Gtk  # noqa: E402

import qactd  # noqa: E402

app_id = sys.argv[1] if len(sys.argv) > 1 else "org.example.Notes"
recent = sys.argv[2:] or ["/tmp/notes.txt", "/tmp/todo.txt", "/tmp/ideas.txt"]


def activate(application):
    window = Gtk.ApplicationWindow(application=application, title="Recent files")
    shown = Gtk.Label(label="Pick a recent file on the app's icon")
    window.set_child(shown)
    window.present()

    quick_actions = qactd.QuickActionsApp(app_id)
    quick_actions.set_items(
        qactd.item(f"recent-{index}", f"Open {os.path.basename(path)}", subtitle=path,
                   icon="document-open-recent", user_info={"path": path})
        for index, path in enumerate(recent))
    print(f"published {len(recent)} items", flush=True)

    def open_picked(pick):
        path = pick.user_info["path"]
        shown.set_label(path)
        print(f"opening {path}{' (at launch)' if pick.at_launch else ''}", flush=True)
        pick.complete()

    quick_actions.watch_picks(open_picked)
    application.quick_actions = quick_actions


application = Gtk.Application(application_id=app_id)
application.connect("activate", activate)
application.run([sys.argv[0]])
