#!/usr/bin/python3
"""Real clients of the quicklist for the end-to-end tests (Debian's python3-gi).

  dbusmenu-client.py follow BUS_NAME OBJECT_PATH [--icons]
      libdbusmenu's own client (Dbusmenu.Client, the library Plank and Dash to Dock use) on the
      session bus: prints {"labels": [...]} each time the menu's items or their labels change; with
      --icons also {"icons": {LABEL: {"name", "image"}}} each time an item's icon changes, "image"
      being its icon-data as GdkPixbuf's loader reads it, as a dock does (the loader picks the
      format from the bytes): {"format", "width", "height", "centre": [r, g, b, a], "top": [...] (an
      eighth of the way down, clear of a monogram's initials), "corner": [...]},
      or {"error"} when the loader cannot read it. Reads commands on
      stdin: "click LABEL" sends the item a "clicked" event, as a dock does, and prints
      {"clicked": LABEL, "error": null or text} once the daemon answered.
  dbusmenu-client.py updates
      Prints {"sender", "path", "uri", "quicklist", "type"} for each
      com.canonical.Unity.LauncherEntry.Update signal. Reads commands on stdin: "own-unity" takes
      the name com.canonical.Unity, as a dock starting does, and prints {"owned": NAME}.
Both print {"ready": true} once listening, and exit when stdin closes.
  dbusmenu-client.py describe BUS_NAME MENU_PATH ENTRY_PATH
      Prints, read over D-Bus with GLib: the interfaces' methods, signals and properties from
      Introspect, the menu's property values (Properties.GetAll) and LauncherEntry.Query's answer.
"""
import json
import sys

import gi

gi.require_version("Dbusmenu", "0.4")
from gi.repository import Dbusmenu, Gio, GLib  # noqa: E402

loop = GLib.MainLoop()


def emit(value):
    print(json.dumps(value), flush=True)


def on_stdin(handle_command):
    def read(channel, condition):
        line = channel.readline()
        if not line:
            loop.quit()
            return False
        handle_command(line.strip())
        return True

    channel = GLib.IOChannel.unix_new(sys.stdin.fileno())
    GLib.io_add_watch(channel, GLib.PRIORITY_DEFAULT, GLib.IOCondition.IN | GLib.IOCondition.HUP, read)


def image(data):
    """What GdkPixbuf's loader makes of an item's icon-data, as a dock's menu loads it."""
    gi.require_version("GdkPixbuf", "2.0")
    from gi.repository import GdkPixbuf
    loader = GdkPixbuf.PixbufLoader()
    try:
        loader.write(data)
        loader.close()
    except GLib.Error as error:
        return {"error": error.message}
    pixbuf = loader.get_pixbuf()
    pixels, stride, channels = pixbuf.get_pixels(), pixbuf.get_rowstride(), pixbuf.get_n_channels()

    def pixel(x, y):
        values = list(pixels[y * stride + x * channels:y * stride + (x + 1) * channels])
        return values + [255] * (4 - len(values))

    return {"format": loader.get_format().get_name(), "width": pixbuf.get_width(), "height": pixbuf.get_height(),
            "centre": pixel(pixbuf.get_width() // 2, pixbuf.get_height() // 2),
            "top": pixel(pixbuf.get_width() // 2, pixbuf.get_height() // 8), "corner": pixel(0, 0)}


def icon(item):
    data = item.property_get_variant("icon-data")
    return {"name": item.property_get("icon-name"),
            "image": image(data.get_data_as_bytes().get_data()) if data is not None and data.n_children() > 0 else None}


def follow(bus_name, path, icons=False):
    client = Dbusmenu.Client.new(bus_name, path)
    last = [None]
    last_icons = [None]

    def children():
        root = client.get_root()
        return root.get_children() if root is not None else []

    def report(*_):
        watch_items()
        labels = [item.property_get("label") for item in children()]
        if labels != last[0]:
            last[0] = labels
            emit({"labels": labels})
        shown = {item.property_get("label"): icon(item) for item in children()} if icons else None
        if shown != last_icons[0]:
            last_icons[0] = shown
            emit({"icons": shown})

    watched = set()

    def watch_items():
        # A new title for the same item comes as ItemsPropertiesUpdated: a property change.
        for item in children():
            if item.get_id() not in watched:
                watched.add(item.get_id())
                item.connect("property-changed", lambda *a: GLib.idle_add(report_once))

    def watch_root(*_):
        root = client.get_root()
        if root is not None:
            root.connect("child-added", lambda *a: GLib.idle_add(report_once))
            root.connect("child-removed", lambda *a: GLib.idle_add(report_once))
        report()

    def report_once():
        report()
        return False

    client.connect("layout-updated", report)
    client.connect("root-changed", watch_root)

    def on_event_result(_client, item, name, _variant, _timestamp, error):
        if name == "clicked":
            emit({"clicked": item.property_get("label"), "error": error.message if error else None})

    client.connect("event-result", on_event_result)

    def command(line):
        verb, _, label = line.partition(" ")
        if verb != "click":
            emit({"error": "unknown command " + line})
            return
        for item in children():
            if item.property_get("label") == label:
                item.handle_event("clicked", GLib.Variant("i", 0), 0)
                return
        emit({"clicked": label, "error": "no item with this label"})

    on_stdin(command)
    emit({"ready": True})
    loop.run()


def updates():
    connection = Gio.bus_get_sync(Gio.BusType.SESSION, None)

    def on_update(_connection, sender, path, _interface, _member, parameters):
        uri, properties = parameters.unpack()
        value = parameters.get_child_value(1).lookup_value("quicklist", None)
        emit({"sender": sender, "path": path, "uri": uri, "quicklist": properties.get("quicklist"),
              "type": value.get_type_string() if value is not None else None})

    connection.signal_subscribe(None, "com.canonical.Unity.LauncherEntry", "Update", None, None,
                                Gio.DBusSignalFlags.NONE, on_update)

    def command(line):
        if line != "own-unity":
            emit({"error": "unknown command " + line})
            return
        Gio.bus_own_name_on_connection(connection, "com.canonical.Unity", Gio.BusNameOwnerFlags.NONE,
                                       lambda _c, name: emit({"owned": name}), None)

    on_stdin(command)
    # A round trip to the bus, so the match is in place before the test goes on.
    connection.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId",
                         None, None, Gio.DBusCallFlags.NONE, -1, None)
    emit({"ready": True})
    loop.run()


def describe(bus_name, menu_path, entry_path):
    connection = Gio.bus_get_sync(Gio.BusType.SESSION, None)

    def call(path, interface, method, arguments=None):
        return connection.call_sync(bus_name, path, interface, method, arguments, None, Gio.DBusCallFlags.NONE, 5000, None)

    def interface(path, name):
        xml = call(path, "org.freedesktop.DBus.Introspectable", "Introspect").unpack()[0]
        info = Gio.DBusNodeInfo.new_for_xml(xml).lookup_interface(name)
        return {"methods": {m.name: "".join(a.signature for a in m.in_args) + "->" + "".join(a.signature for a in m.out_args)
                            for m in info.methods},
                "signals": {s.name: "".join(a.signature for a in s.args) for s in info.signals},
                "properties": {p.name: p.signature for p in info.properties}}

    properties = call(menu_path, "org.freedesktop.DBus.Properties", "GetAll", GLib.Variant("(s)", ("com.canonical.dbusmenu",)))
    uri, entry = call(entry_path, "com.canonical.Unity.LauncherEntry", "Query").unpack()
    # The root's properties limited to one name; an id the menu does not have is left out.
    group = call(menu_path, "com.canonical.dbusmenu", "GetGroupProperties", GLib.Variant("(aias)", ([0, 999999], ["children-display"])))
    emit({"dbusmenu": interface(menu_path, "com.canonical.dbusmenu"),
          "launcherEntry": interface(entry_path, "com.canonical.Unity.LauncherEntry"),
          "values": properties.unpack()[0], "query": {"uri": uri, "properties": entry}, "group": group.unpack()[0]})


if __name__ == "__main__":
    if len(sys.argv) in (4, 5) and sys.argv[1] == "follow" and sys.argv[4:] in ([], ["--icons"]):
        follow(sys.argv[2], sys.argv[3], icons=sys.argv[4:] == ["--icons"])
    elif len(sys.argv) == 2 and sys.argv[1] == "updates":
        updates()
    elif len(sys.argv) == 5 and sys.argv[1] == "describe":
        describe(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
