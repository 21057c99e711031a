#!/usr/bin/python3
"""Writes online accounts' address-book caches the way Evolution Data Server does, through its
own library: EDataBook.BookCache (EBookCache, Debian's gir1.2-edatabook-1.2 with python3-gi),
the class EDS's CardDAV, Google and WebDAV backends keep their books' caches with, at the path
their factory uses (the tests ask EDS for it: eds-online-book.py). Each database stays open
from its first request on, as in EDS's backend (its revisions count up per opening).

Reads one JSON object per line on stdin and answers each with one JSON line on stdout
({"ok": true, ...} or {"ok": false, "error": TEXT}); prints {"ready": true} first.
  {"op": "put", "database": PATH, "uid": UID, "name": NAME, "email": EMAIL?, "star": BOOL?,
   "categories": [TEXT]?, "offline": BOOL?}
      adds or replaces the contact (X-FOLKS-FAVOURITE:true when starred, as GNOME Contacts
      marks a favorite); offline: a change made while the account was offline
  {"op": "remove", "database": PATH, "uid": UID, "offline": BOOL?}
      deletes it; offline keeps the row, marked locally deleted, as EDS does until the server
      is told
  {"op": "close", "database": PATH}
Exits when stdin closes.
"""
import os

import gi
from json_lines_driver import serve

gi.require_version("EBackend", "1.2")
gi.require_version("EBookContacts", "1.2")
gi.require_version("EDataBook", "1.2")
from gi.repository import EBackend, EBookContacts, EDataBook  # noqa: E402

FAVOURITE = "X-FOLKS-FAVOURITE"
caches = {}


def cache(path):
    if path not in caches:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        caches[path] = EDataBook.BookCache.new(path, None, None)
    return caches[path]


def handle(request):
    op = request["op"]
    path = request["database"]
    flag = EBackend.CacheOfflineFlag.IS_OFFLINE if request.get("offline") else EBackend.CacheOfflineFlag.IS_ONLINE
    if op == "put":
        card = EBookContacts.Contact.new()
        card.set_property("id", request["uid"])
        card.set_property("full-name", request["name"])
        if request.get("email"):
            card.set_property("email-1", request["email"])
        if request.get("categories"):
            card.set_property("categories", ",".join(request["categories"]))
        if request.get("star"):
            attribute = EBookContacts.VCardAttribute.new(None, FAVOURITE)
            attribute.add_value("true")
            card.add_attribute(attribute)
        cache(path).put_contact(card, None, 0, flag, None)
        return {"revision": cache(path).dup_revision()}
    if op == "remove":
        cache(path).remove_contact(request["uid"], 0, flag, None)
        return {"revision": cache(path).dup_revision()}
    if op == "close":
        caches.pop(path, None)
        return {}
    raise ValueError("unknown op %r" % op)


serve(handle)
