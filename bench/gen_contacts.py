#!/usr/bin/env python3
"""Writes a vdir contacts folder for the benchmarks: N vCards spread over collection
subfolders, F of them favorites (CATEGORIES:favorite), evenly spaced.

    bench/gen_contacts.py DIR --contacts N --favorites F [--collections C] [--long]

Contact i is the file cI/pI.vcf (collection i mod C) with UID pI and the name
"Person NNNNNNN" (zero-padded, so name order is number order); the favorites are the
contacts whose number is a multiple of N // F. Deterministic: the same arguments give
the same bytes.

--long writes data shaped like a real address book's instead, whose strings do not fit
in 15 bytes: contact i is the file cI/UUID.vcf with that 36-character UUID as its UID
(derived from i), the name "Person NNNNNNN Given Family" and the email
"given.family.i@example-company.org" (the same favorites; name order is still number order).
"""
import argparse, os, uuid

GIVEN = ["Alexandra", "Benedikt", "Charlotte", "Dominique", "Evangeline", "Friedrich", "Guillermo", "Henrietta"]
FAMILY = ["Abernathy-Smith", "Bergström", "Castellanos", "Dimitriou", "Eichenwald", "Fitzgerald", "Gonçalves"]


def uid_of(number, long=False):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"qactd-bench:{number}")) if long else f"p{number}"


def card(number, favorite, name=None, long=False):
    if long:
        given, family = GIVEN[number % len(GIVEN)], FAMILY[number % len(FAMILY)]
        full_name = name or f"Person {number:07d} {given} {family}"
        email = f"{given}.{family}.{number}@example-company.org".lower().replace("ö", "o").replace("ç", "c")
    else:
        full_name, email = name or f"Person {number:07d}", f"p{number}@example.org"
    lines = ["BEGIN:VCARD", "VERSION:4.0", f"UID:{uid_of(number, long)}", f"FN:{full_name}",
             f"EMAIL:{email}", f"TEL:+1-555-{number % 10000:04d}"]
    if favorite:
        lines.append("CATEGORIES:favorite")
    lines.append("END:VCARD")
    return ("\r\n".join(lines) + "\r\n").encode()


def is_favorite(number, contacts, favorites):
    return favorites > 0 and number % max(1, contacts // favorites) == 0 and number // max(1, contacts // favorites) < favorites


def path_of(directory, number, collections=10, long=False):
    return os.path.join(directory, f"c{number % collections}", f"{uid_of(number, long)}.vcf")


def write_file(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def generate(directory, contacts, favorites, collections=10, long=False):
    for collection in range(collections):
        os.makedirs(os.path.join(directory, f"c{collection}"), exist_ok=True)
    for number in range(contacts):
        write_file(path_of(directory, number, collections, long),
                   card(number, is_favorite(number, contacts, favorites), long=long))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--contacts", type=int, required=True)
    parser.add_argument("--favorites", type=int, default=0)
    parser.add_argument("--collections", type=int, default=10)
    parser.add_argument("--long", action="store_true", help="UUID UIDs and file names, longer names and emails")
    options = parser.parse_args()
    generate(options.directory, options.contacts, options.favorites, options.collections, options.long)


if __name__ == "__main__":
    main()
