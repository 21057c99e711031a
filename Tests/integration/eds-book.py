#!/usr/bin/python3
"""Drives Evolution Data Server through its own client library (EBook.BookClient, Debian's
gir1.2-ebook-1.2 with python3-gi) for the end-to-end tests. Run it with DBUS_SESSION_BUS_ADDRESS
and the XDG folders the private EDS uses.

Reads one JSON object per line on stdin and answers each with one JSON line on stdout
({"ok": true, ...} or {"ok": false, "error": TEXT}); prints {"ready": true} first.
  {"op": "add", "book": UID, "name": NAME, "email": EMAIL?, "star": BOOL?,
   "categories": [TEXT]?, "vcard": TEXT?, "photo": BASE64?, "photo_type": MIME?}
                                                         -> {"uid": CONTACT-UID}
    ("photo": the image's bytes, set inline as an app does; a local book keeps it as a file
    in its photos/ folder, which its vCard's PHOTO names by a file:// URI.)
  {"op": "rename", "book": UID, "uid": CONTACT-UID, "name": NAME}
  {"op": "star" | "unstar", "book": UID, "uid": CONTACT-UID}   (X-FOLKS-FAVOURITE, as folks writes it)
  {"op": "delete", "book": UID, "uid": CONTACT-UID}
  {"op": "new-book", "name": NAME}                       -> {"book": SOURCE-UID}  (a local address book)
  {"op": "remove-book", "book": UID}
  {"op": "enable-book" | "disable-book", "book": UID}     (the source's Enabled=, written by EDS's registry)
  {"op": "open", "book": UID}                            -> {"database": PATH}
    (an online account's or a server's book, opened in the address-book factory: the database
    its backend made in EDS's cache folder for it, found by its SQLite header, not its name)
  {"op": "sync", "book": UID, "uid": CONTACT-UID, "name": NAME?, "star": BOOL?, "gone": BOOL?,
   "timeout": SECONDS?}                                  -> {"seconds": S}
    (asks the book's backend to refresh from its server, then waits until the factory serves
    the contact as given: so named, so starred, or gone; S from the request to then)
BOOK "system-address-book" is the built-in "Personal" book. Exits when stdin closes.
"""

import base64
import os
import time

import gi
from json_lines_driver import serve

gi.require_version("EBook", "1.2")
gi.require_version("EBookContacts", "1.2")
gi.require_version("EDataServer", "1.2")
from gi.repository import EBook, EBookContacts, EDataServer, GLib  # noqa: E402

FAVOURITE = "X-FOLKS-FAVOURITE"
registry = EDataServer.SourceRegistry.new_sync(None)
clients = {}


def client(uid):
    if uid not in clients:
        # A source file written while the registry runs reaches this client a moment later.
        source = until(lambda: registry.ref_source(uid), 10, "no address book %r" % uid)
        # A wait of 1 s answers at once on a private bus; 0 would block.
        clients[uid] = EBook.BookClient.connect_sync(source, 1, None)
    return clients[uid]


def contact(book, uid):
    ok, found = client(book).get_contact_sync(uid, None)
    return found


def modify(book, card):
    client(book).modify_contact_sync(card, EBookContacts.BookOperationFlags.NONE, None)


def set_star(card, starred):
    card.remove_attributes(None, FAVOURITE)
    if starred:
        attribute = EBookContacts.VCardAttribute.new(None, FAVOURITE)
        attribute.add_value("true")
        card.add_attribute(attribute)


def set_photo(card, data, mime_type):
    photo = EBookContacts.ContactPhoto.new()
    photo.set_inlined(data)
    photo.set_mime_type(mime_type)
    card.set_property("photo", photo)


def database(book):
    """The SQLite database in the cache folder EDS gives the book's backend, if it made one yet."""
    folder = os.path.join(EDataServer.get_user_cache_dir(), "addressbook", book)
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            with open(path, "rb") as file:
                if file.read(16) == b"SQLite format 3\x00":
                    return path
    return None


def until(condition, timeout, what):
    deadline = time.monotonic() + timeout
    context = GLib.MainContext.default()
    while True:
        # The registry learns of sources in its own thread and tells this one through its main
        # context: dispatched here, as a main loop would.
        while context.pending():
            context.iteration(False)
        found = condition()
        if found:
            return found
        if time.monotonic() > deadline:
            raise TimeoutError("%s within %s s" % (what, timeout))
        time.sleep(0.005)


def served_as(book, request):
    try:
        card = contact(book, request["uid"])
    except GLib.Error:
        card = None
    if request.get("gone"):
        return card is None
    if card is None:
        return False
    if "name" in request and card.get_property("full-name") != request["name"]:
        return False
    if "star" in request and bool(card.get_attribute(FAVOURITE)) != request["star"]:
        return False
    return True


def handle(request):
    op = request["op"]
    book = request.get("book", "system-address-book")
    if op == "add":
        if "vcard" in request:
            card = EBookContacts.Contact.new_from_vcard(request["vcard"])
        else:
            card = EBookContacts.Contact.new()
            card.set_property("full-name", request["name"])
            if request.get("email"):
                card.set_property("email-1", request["email"])
            if request.get("categories"):
                card.set_property("categories", ",".join(request["categories"]))
            set_star(card, request.get("star", False))
            if request.get("photo"):
                set_photo(card, base64.b64decode(request["photo"]), request.get("photo_type", "image/png"))
        ok, uid = client(book).add_contact_sync(card, EBookContacts.BookOperationFlags.NONE, None)
        return {"uid": uid}
    if op == "rename":
        card = contact(book, request["uid"])
        card.set_property("full-name", request["name"])
        modify(book, card)
        return {}
    if op in ("star", "unstar"):
        card = contact(book, request["uid"])
        set_star(card, op == "star")
        modify(book, card)
        return {}
    if op == "delete":
        client(book).remove_contact_by_uid_sync(request["uid"], EBookContacts.BookOperationFlags.NONE, None)
        return {}
    if op == "new-book":
        source = EDataServer.Source.new(None, None)
        source.set_display_name(request["name"])
        source.get_extension(EDataServer.SOURCE_EXTENSION_ADDRESS_BOOK).set_backend_name("local")
        registry.commit_source_sync(source, None)
        uid = source.get_uid()
        client(uid)  # opening it makes EDS create its folder and database
        return {"book": uid}
    if op == "remove-book":
        clients.pop(book, None)
        registry.ref_source(book).remove_sync(None)
        return {}
    if op in ("enable-book", "disable-book"):
        # As Evolution's preferences and GNOME Online Accounts turn a book off: the registry
        # writes the source's key file with Enabled=false.
        source = registry.ref_source(book)
        source.set_enabled(op == "enable-book")
        source.write_sync(None)
        return {}
    if op == "open":
        client(book)
        return {"database": until(lambda: database(book), request.get("timeout", 20), "no database for %s" % book)}
    if op == "sync":
        began = time.monotonic()
        client(book).refresh_sync(None)
        until(lambda: served_as(book, request), request.get("timeout", 30), "%s not synced as %r" % (book, request))
        return {"seconds": time.monotonic() - began}
    raise ValueError("unknown op %r" % op)


serve(handle)
