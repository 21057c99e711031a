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
BOOK "system-address-book" is the built-in "Personal" book. Exits when stdin closes.
"""

import base64

import gi
from json_lines_driver import serve

gi.require_version("EBook", "1.2")
gi.require_version("EBookContacts", "1.2")
gi.require_version("EDataServer", "1.2")
from gi.repository import EBook, EBookContacts, EDataServer  # noqa: E402

FAVOURITE = "X-FOLKS-FAVOURITE"
registry = EDataServer.SourceRegistry.new_sync(None)
clients = {}


def client(uid):
    if uid not in clients:
        source = registry.ref_source(uid)
        if source is None:
            raise ValueError("no address book %r" % uid)
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
    raise ValueError("unknown op %r" % op)


serve(handle)
