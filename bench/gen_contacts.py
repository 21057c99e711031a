#!/usr/bin/env python3
"""Writes a vdir contacts folder for the benchmarks: N vCards spread over collection
subfolders, F of them favorites (CATEGORIES:favorite), evenly spaced.

    bench/gen_contacts.py DIR --contacts N --favorites F [--collections C]

Contact i is the file cI/pI.vcf (collection i mod C) with UID pI and the name
"Person NNNNNNN" (zero-padded, so name order is number order); the favorites are the
contacts whose number is a multiple of N // F. Deterministic: the same arguments give
the same bytes.
"""
import argparse, os


def card(number, favorite, name=None):
    lines = ["BEGIN:VCARD", "VERSION:4.0", f"UID:p{number}", f"FN:{name or f'Person {number:07d}'}",
             f"EMAIL:p{number}@example.org", f"TEL:+1-555-{number % 10000:04d}"]
    if favorite:
        lines.append("CATEGORIES:favorite")
    lines.append("END:VCARD")
    return ("\r\n".join(lines) + "\r\n").encode()


def is_favorite(number, contacts, favorites):
    return favorites > 0 and number % max(1, contacts // favorites) == 0 and number // max(1, contacts // favorites) < favorites


def path_of(directory, number, collections=10):
    return os.path.join(directory, f"c{number % collections}", f"p{number}.vcf")


def write_file(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def generate(directory, contacts, favorites, collections=10):
    for collection in range(collections):
        os.makedirs(os.path.join(directory, f"c{collection}"), exist_ok=True)
    for number in range(contacts):
        write_file(path_of(directory, number, collections), card(number, is_favorite(number, contacts, favorites)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--contacts", type=int, required=True)
    parser.add_argument("--favorites", type=int, default=0)
    parser.add_argument("--collections", type=int, default=10)
    options = parser.parse_args()
    generate(options.directory, options.contacts, options.favorites, options.collections)


if __name__ == "__main__":
    main()
