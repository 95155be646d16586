#!/usr/bin/env python3
"""An independent check of a verityd transparency log, written from the C2SP texts
(signed-note, tlog-checkpoint, tlog-tiles) and RFC 6962, sharing no code with verityd.

Usage: tlog_check.py VKEY_FILE LOG_DIR
  VKEY_FILE  the log's note verifier key, <name>+<hex key id>+<base64(0x01 || Ed25519 key)>
  LOG_DIR    the log's published objects: LOG_DIR/checkpoint and LOG_DIR/tile/...

Checks the key's ID, the checkpoint note's Ed25519 signature and its text, then reads every
entry bundle and every hash tile of the checkpoint's size, and checks that the level-0 tiles
hold the RFC 6962 leaf hashes of the entries, each higher tile the hashes of the full subtrees
below it, and the tree's root the checkpoint's. Prints a summary; exits 1 on any failure.
"""
import base64
import hashlib
import os
import struct
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

TILE_HEIGHT = 8
WIDTH = 1 << TILE_HEIGHT


def fail(why):
    print("tlog_check: FAIL: " + why)
    sys.exit(1)


def parse_vkey(text):
    name, hex_id, b64 = text.strip().split("+", 2)
    raw = base64.b64decode(b64, validate=True)
    if raw[0] != 0x01 or len(raw) != 33:
        fail("the verifier key is not an Ed25519 key")
    # signed-note: key ID = SHA-256(name || 0x0A || type || key)[:4]
    key_id = hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4]
    if key_id.hex() != hex_id:
        fail("the verifier key's ID is not its hash")
    return name, key_id, Ed25519PublicKey.from_public_bytes(raw[1:])


def verify_note(note, name, key_id, public_key):
    text, sep, sigs = note.partition("\n\n")
    if not sep or not sigs.endswith("\n"):
        fail("the checkpoint is not a signed note")
    text += "\n"
    verified = 0
    for line in sigs[:-1].split("\n"):
        if not line.startswith("\u2014 "):
            fail("a signature line does not start with an em dash: %r" % line)
        signer, b64 = line[2:].split(" ")
        blob = base64.b64decode(b64, validate=True)
        if signer == name and blob[:4] == key_id:
            try:
                public_key.verify(blob[4:], text.encode())
            except InvalidSignature:
                fail("the log's signature does not verify")
            verified += 1
    if verified == 0:
        fail("no signature by the log's key")
    return text


def parse_checkpoint(text, origin):
    lines = text.split("\n")[:-1]
    if len(lines) < 3 or lines[0] != origin:
        fail("the checkpoint's origin is not the key's name")
    size = int(lines[1])
    if str(size) != lines[1]:
        fail("the checkpoint's size is not canonical")
    root = base64.b64decode(lines[2], validate=True)
    if len(root) != 32:
        fail("the root hash is not 32 bytes")
    return size, root


def tile_path(level, index, width):
    """tlog-tiles: the index in 3-digit groups, all but the last prefixed with x."""
    digits = "%03d" % index
    while len(digits) % 3:
        digits = "0" + digits
    groups = [digits[i:i + 3] for i in range(0, len(digits), 3)]
    path = "/".join(["x" + g for g in groups[:-1]] + [groups[-1]])
    path = "tile/%s/%s" % (level, path)
    if width < WIDTH:
        path += ".p/%d" % width
    return path


def read(log_dir, path):
    with open(os.path.join(log_dir, path), "rb") as f:
        return f.read()


def leaf_hash(entry):
    return hashlib.sha256(b"\x00" + entry).digest()


def node_hash(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def mth(hashes):
    """RFC 6962 section 2.1 over leaf hashes."""
    if len(hashes) == 1:
        return hashes[0]
    k = 1
    while k * 2 < len(hashes):
        k *= 2
    return node_hash(mth(hashes[:k]), mth(hashes[k:]))


def main():
    if len(sys.argv) != 3:
        fail(__doc__)
    with open(sys.argv[1]) as f:
        origin, key_id, public_key = parse_vkey(f.read())
    log_dir = sys.argv[2]
    note = read(log_dir, "checkpoint").decode("utf-8")
    size, root = parse_checkpoint(verify_note(note, origin, key_id, public_key), origin)
    if size == 0:
        fail("the log is empty")

    entries = []
    for n in range((size + WIDTH - 1) // WIDTH):
        width = min(WIDTH, size - n * WIDTH)
        bundle = read(log_dir, tile_path("entries", n, width))
        at = 0
        got = 0
        while at < len(bundle):
            (length,) = struct.unpack(">H", bundle[at:at + 2])
            entries.append(bundle[at + 2:at + 2 + length])
            at += 2 + length
            got += 1
        if got != width or at != len(bundle):
            fail("entry bundle %d holds %d entries, not %d" % (n, got, width))
    leaves = [leaf_hash(e) for e in entries]

    # Every tile, level by level: level L holds the hashes of the full subtrees of 256^L
    # leaves; a partial tile the ones of the right edge.
    level_hashes = leaves
    tiles = 0
    level = 0
    while level_hashes:
        for n in range((len(level_hashes) + WIDTH - 1) // WIDTH):
            chunk = level_hashes[n * WIDTH:(n + 1) * WIDTH]
            want = b"".join(chunk)
            if read(log_dir, tile_path(level, n, len(chunk))) != want:
                fail("tile %s is not the hashes below it" % tile_path(level, n, len(chunk)))
            tiles += 1
        full = len(level_hashes) // WIDTH
        level_hashes = [mth(level_hashes[i * WIDTH:(i + 1) * WIDTH]) for i in range(full)]
        level += 1

    if mth(leaves) != root:
        fail("the entries' tree hash is not the checkpoint's root")
    print("tlog_check: ok: %s, %d entries, %d tiles, signature and root verified"
          % (origin, size, tiles))


if __name__ == "__main__":
    main()
