#!/usr/bin/env python3
"""Writes a vdir contacts folder for the benchmarks: N vCards spread over collection
subfolders, F of them favorites (CATEGORIES:favorite), evenly spaced.

    bench/gen_contacts.py DIR --contacts N --favorites F [--collections C] [--long] [--book] [--photos]

Contact i is the file cI/pI.vcf (collection i mod C) with UID pI and the name
"Person NNNNNNN" (zero-padded, so name order is number order); the favorites are the
contacts whose number is a multiple of N // F. Deterministic: the same arguments give
the same bytes.

--long writes data shaped like a real address book's instead, whose strings do not fit
in 15 bytes: contact i is the file cI/UUID.vcf with that 36-character UUID as its UID
(derived from i), the name "Person NNNNNNN Given Family" and the email
"given.family.i@example-company.org" (the same favorites; name order is still number order).

--book writes the shape of an address book's export, the benchmark's headline workload:
vCard 3.0 with CRLF, about 200 bytes a card (UID, FN, N, EMAIL, TEL), the favorites starred
the way address books export a star (CATEGORIES:starred). Contact i is the file cI/UUID.vcf
with that UUID as its UID; its name is one of a few thousand realistic given/family pairs
(repeated, as names are in real books), except contact 0, "Aaron Aaberg", whose name no
other contact has and which sorts first.

--photos gives every favorite a photo: the JPEG of bench/gen_photo.py (about 47 KiB, made
with Debian's /usr/bin/python3 and Pillow), marked with the contact's number in a comment
segment so no two favorites carry the same bytes, inline as address books export it
(vCard 3.0: `PHOTO;ENCODING=b;TYPE=JPEG:` and base64; 4.0: a `data:` URI), folded at 75
octets, before the card's categories (so a reader looking for the star reads past it).
"""
import argparse, base64, os, subprocess, uuid

GIVEN = ["Alexandra", "Benedikt", "Charlotte", "Dominique", "Evangeline", "Friedrich", "Guillermo", "Henrietta"]
FAMILY = ["Abernathy-Smith", "Bergström", "Castellanos", "Dimitriou", "Eichenwald", "Fitzgerald", "Gonçalves"]


BOOK_GIVEN = ["Emma", "Liam", "Olivia", "Noah", "Sophia", "Lucas", "Mia", "Elias", "Charlotte", "Jonas",
              "Amelia", "Felix", "Hannah", "Leon", "Isabella", "Paul", "Clara", "Mateo", "Lena", "Henry",
              "Marie", "Oscar", "Zoe", "Daniel", "Julia", "Samuel", "Laura", "David", "Sarah", "Thomas",
              "Anna", "Michael", "Emily", "James", "Grace", "Benjamin", "Chloe", "William", "Nora", "Jakob",
              "Ingrid", "Mohammed", "Fatima", "Pierre", "Camille", "Giulia", "Marco", "Sofía", "Javier", "Yuki"]
BOOK_FAMILY = ["Smith", "Müller", "Johnson", "Schmidt", "Williams", "Schneider", "Brown", "Fischer", "Garcia",
               "Weber", "Martin", "Meyer", "Rossi", "Wagner", "Dubois", "Becker", "Novak", "Hoffmann", "Kowalski",
               "Schulz", "Jensen", "Koch", "Nielsen", "Richter", "Silva", "Klein", "Santos", "Wolf", "Ferreira",
               "Schröder", "Andersson", "Neumann", "Moreau", "Schwarz", "Lefebvre", "Zimmermann", "Bianchi",
               "Braun", "Tanaka", "Hofmann", "O'Brien", "Hartmann", "Murphy", "Lange", "Kim", "Schmitt", "Nguyen",
               "Werner", "Petrov", "Krause", "Lindqvist", "Meier", "Van der Berg", "Lehmann", "Costa", "Walker"]
BOOK_DOMAINS = ["gmail.com", "outlook.com", "example.org", "posteo.de", "mailbox.org", "web.de", "yahoo.com", "fastmail.com"]
BOOK_FIRST = ("Aaron", "Aaberg")  # contact 0 only: a name that sorts first and no other contact has


def uid_of(number, long=False):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"qactd-bench:{number}")) if long else f"p{number}"


def ascii_folded(text):
    return (text.lower().replace("ü", "ue").replace("ö", "oe").replace("í", "i").replace("'", "")
            .replace(" ", ""))


def book_name(number):
    if number == 0:
        return BOOK_FIRST
    return BOOK_GIVEN[number % len(BOOK_GIVEN)], BOOK_FAMILY[(number // len(BOOK_GIVEN)) % len(BOOK_FAMILY)]


_photo = None


def photo_jpeg():
    """The benchmark's photo (bench/gen_photo.py), made once per process."""
    global _photo
    if _photo is None:
        _photo = subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_photo.py")],
                                check=True, capture_output=True).stdout
    return _photo


def photo_line(number, version):
    """Contact `number`'s PHOTO property, folded: the photo with a JPEG comment segment
    (FF FE, its length, the text) naming the contact right after the start-of-image marker."""
    jpeg = photo_jpeg()
    comment = f"qactd bench contact {number}".encode()
    jpeg = jpeg[:2] + b"\xff\xfe" + (len(comment) + 2).to_bytes(2, "big") + comment + jpeg[2:]
    data = base64.b64encode(jpeg).decode()
    line = ("PHOTO;ENCODING=b;TYPE=JPEG:" if version == "3.0" else "PHOTO:data:image/jpeg;base64,") + data
    return "\r\n ".join([line[:75]] + [line[i:i + 74] for i in range(75, len(line), 74)])


def book_card(number, favorite, name=None, photos=False):
    given, family = book_name(number)
    domain = BOOK_DOMAINS[number % len(BOOK_DOMAINS)]
    lines = ["BEGIN:VCARD", "VERSION:3.0", f"UID:{uid_of(number, True)}", f"FN:{name or given + ' ' + family}",
             f"N:{family};{given};;;", f"EMAIL;TYPE=INTERNET,HOME:{ascii_folded(given)}.{ascii_folded(family)}{number % 1000}@{domain}",
             f"TEL;TYPE=CELL:+49 151 {number * 7919 % 10_000_000:07d}"]
    if favorite and photos:
        lines.append(photo_line(number, "3.0"))
    if favorite:
        lines.append("CATEGORIES:starred")
    lines.append("END:VCARD")
    return ("\r\n".join(lines) + "\r\n").encode()


def card(number, favorite, name=None, long=False, shape=None, photos=False):
    if shape == "book":
        return book_card(number, favorite, name, photos)
    if long:
        given, family = GIVEN[number % len(GIVEN)], FAMILY[number % len(FAMILY)]
        full_name = name or f"Person {number:07d} {given} {family}"
        email = f"{given}.{family}.{number}@example-company.org".lower().replace("ö", "o").replace("ç", "c")
    else:
        full_name, email = name or f"Person {number:07d}", f"p{number}@example.org"
    lines = ["BEGIN:VCARD", "VERSION:4.0", f"UID:{uid_of(number, long)}", f"FN:{full_name}",
             f"EMAIL:{email}", f"TEL:+1-555-{number % 10000:04d}"]
    if favorite and photos:
        lines.append(photo_line(number, "4.0"))
    if favorite:
        lines.append("CATEGORIES:favorite")
    lines.append("END:VCARD")
    return ("\r\n".join(lines) + "\r\n").encode()


def is_favorite(number, contacts, favorites):
    return favorites > 0 and number % max(1, contacts // favorites) == 0 and number // max(1, contacts // favorites) < favorites


def path_of(directory, number, collections=10, long=False, shape=None):
    return os.path.join(directory, f"c{number % collections}", f"{uid_of(number, long or shape == 'book')}.vcf")


def write_file(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def generate(directory, contacts, favorites, collections=10, long=False, shape=None, photos=False):
    for collection in range(collections):
        os.makedirs(os.path.join(directory, f"c{collection}"), exist_ok=True)
    for number in range(contacts):
        write_file(path_of(directory, number, collections, long, shape),
                   card(number, is_favorite(number, contacts, favorites), long=long, shape=shape, photos=photos))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--contacts", type=int, required=True)
    parser.add_argument("--favorites", type=int, default=0)
    parser.add_argument("--collections", type=int, default=10)
    parser.add_argument("--long", action="store_true", help="UUID UIDs and file names, longer names and emails")
    parser.add_argument("--book", action="store_true", help="address-book export shape: vCard 3.0, ~200 bytes, CATEGORIES:starred")
    parser.add_argument("--photos", action="store_true", help="a photo (a JPEG of about 47 KiB, inline) on every favorite")
    options = parser.parse_args()
    generate(options.directory, options.contacts, options.favorites, options.collections, options.long,
             "book" if options.book else None, options.photos)


if __name__ == "__main__":
    main()
