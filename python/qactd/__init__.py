"""An app's own Home Screen quick actions on Linux, through its qactd instance.

The app is known by its desktop-file ID (``org.example.Editor``), which names its instance
(``qactd@org.example.Editor``, socket ``$XDG_RUNTIME_DIR/qactd/org.example.Editor.sock``). It
sets its items, and receives each item a person picks on its icon: while it runs through its
connection (``picks`` or, in a GLib main loop, ``watch_picks``), and when it was started for a
pick, as the first of them. Varlink is spoken directly: NUL-terminated JSON on a Unix socket.
"""

import json
import os
import socket
import subprocess

__all__ = ["QuickActionsApp", "QuickActionsError", "Pick", "item"]

INTERFACE = "io.qactd.QuickActions"


class QuickActionsError(Exception):
    """The daemon refused a call: ``name`` is its Varlink error (``InvalidItem``,
    ``TooManyItems``, ``NoSuchItem``, ...) and ``parameters`` its details (``field``)."""

    def __init__(self, name, parameters):
        super().__init__(f"{name}: {parameters}")
        self.name = name
        self.parameters = parameters


def item(type, title, subtitle=None, icon=None, user_info=None):
    """One quick action. ``icon`` is a theme icon name (``document-open-recent``), a system
    type as ``("system", "compose")`` or an image as ``("file", "/abs/path.png")``."""
    result = {"type": type, "title": title}
    if subtitle is not None:
        result["subtitle"] = subtitle
    if icon is not None:
        kind, name = icon if isinstance(icon, tuple) else ("themed", icon)
        result["icon"] = {"kind": kind, "name": name}
    if user_info:
        result["userInfo"] = user_info
    return result


class _Connection:
    """One Varlink connection: calls written as NUL-terminated JSON, replies read the same way."""

    def __init__(self, path):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self.socket.connect(path)
        self.buffer = b""

    def send(self, method, parameters=None, more=False):
        call = {"method": f"{INTERFACE}.{method}", "parameters": parameters or {}}
        if more:
            call["more"] = True
        self.socket.sendall(json.dumps(call).encode() + b"\0")

    def receive(self):
        while b"\0" not in self.buffer:
            chunk = self.socket.recv(65536)
            if not chunk:
                raise ConnectionError("qactd closed the connection")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        reply = json.loads(message)
        if "error" in reply:
            raise QuickActionsError(reply["error"].rsplit(".", 1)[-1], reply.get("parameters", {}))
        return reply

    def call(self, method, parameters=None):
        self.send(method, parameters)
        return self.receive().get("parameters", {})


class Pick:
    """An item a person picked: ``item`` (with its ``userInfo``), and ``at_launch`` when the
    app was started for it. Call ``complete()`` once the app did what it says."""

    def __init__(self, app, reply):
        self.item = reply.get("pendingItem") or reply.get("action")
        self.user_info = self.item.get("userInfo", {})
        self.at_launch = "pendingItem" in reply
        self._token = reply.get("token")
        self._app = app

    def complete(self, handled=True):
        """Tells the daemon whether the pick was handled (nothing to tell for a launch's)."""
        if self._token is not None:
            self._app._call("Complete", {"token": self._token, "handled": handled})


class QuickActionsApp:
    """The app's door to its qactd instance, started on first use when nothing listens."""

    def __init__(self, desktop_file_id, socket_path=None, start_instance=True):
        self.app = desktop_file_id.removesuffix(".desktop")
        runtime = os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"
        self.socket_path = socket_path or os.environ.get("QACTD_SOCKET") or f"{runtime}/qactd/{self.app}.sock"
        self._start_instance = start_instance
        self._calls = self._connect()
        self._picks = None

    def _connect(self):
        try:
            return _Connection(self.socket_path)
        except (FileNotFoundError, ConnectionRefusedError):
            if not self._start_instance:
                raise
            subprocess.run(["systemctl", "--user", "start", f"qactd@{self.app}.socket"], check=True)
            return _Connection(self.socket_path)

    def _call(self, method, parameters=None):
        return self._calls.call(method, parameters)

    def set_items(self, items):
        """Replaces the app's own items with ``items`` (see ``item``), in this order."""
        return self._call("SetItems", {"items": list(items)})

    def push_item(self, one):
        """Puts one item first, replacing the item of its type."""
        return self._call("PushItem", {"item": one})

    def remove_items(self, types):
        """Removes the app's items of these types."""
        return self._call("RemoveItems", {"types": list(types)})

    def report_item_used(self, type):
        """The app did what its item of ``type`` does, from its own menus."""
        self._call("ReportItemUsed", {"type": type})

    def items(self):
        """The app's own items as the daemon keeps them."""
        return self._call("Items")["items"]

    def _connect_picks(self):
        if self._picks is None:
            self._picks = self._connect()
            self._picks.send("Connect", more=True)
        return self._picks

    def picks(self):
        """Yields each pick, blocking: the one the app was started for first, if any."""
        connection = self._connect_picks()
        while True:
            reply = connection.receive().get("parameters", {})
            if reply.get("pendingItem") or reply.get("action"):
                yield Pick(self, reply)

    def watch_picks(self, callback):
        """In a GLib main loop (GTK): calls ``callback(pick)`` for each pick, from the loop."""
        from gi.repository import GLib

        connection = self._connect_picks()

        def readable(_fd, condition):
            if condition & (GLib.IOCondition.HUP | GLib.IOCondition.ERR):
                return False
            chunk = connection.socket.recv(65536)
            if not chunk:
                return False
            connection.buffer += chunk
            while b"\0" in connection.buffer:
                message, connection.buffer = connection.buffer.split(b"\0", 1)
                reply = json.loads(message).get("parameters", {})
                if reply.get("pendingItem") or reply.get("action"):
                    callback(Pick(self, reply))
            return True

        return GLib.io_add_watch(
            connection.socket.fileno(), GLib.PRIORITY_DEFAULT,
            GLib.IOCondition.IN | GLib.IOCondition.HUP | GLib.IOCondition.ERR, readable)
