#!/usr/bin/python3
"""Writes the benchmark's contact photo to standard output: a 448×448 JPEG of about 45 KiB,
the size of a photo an address book keeps for a person (a phone's contact picture), made
deterministically (a seeded pattern of soft colour and grain, so it compresses as a photo
does, not as a flat image): the same bytes on every run of the same Pillow.

    /usr/bin/python3 bench/gen_photo.py > photo.jpg

Run with Debian's python3, which has Pillow (python3-pil, from scripts/install-deps --test).
"""
import io, random, sys

from PIL import Image, ImageFilter

SIDE = 448


def photo():
    rng = random.Random(35)
    cells = SIDE // 8
    colours = Image.frombytes("RGB", (cells, cells), bytes(rng.randrange(256) for _ in range(3 * cells * cells)))
    grain = Image.frombytes("RGB", (SIDE, SIDE), bytes(rng.randrange(96, 160) for _ in range(3 * SIDE * SIDE)))
    image = Image.blend(colours.resize((SIDE, SIDE), Image.BICUBIC), grain, 0.25).filter(ImageFilter.GaussianBlur(0.6))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85)
    return out.getvalue()


if __name__ == "__main__":
    sys.stdout.buffer.write(photo())
