#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz/corpus/ (checked in; rerun after changing an input format).

Each seed is a few bytes to a few KiB, written for the input format its target's header comment
describes: honest cases the target must accept, and a few of each kind of lie.
"""
import hashlib
import os
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def u8(*values):
    return bytes(v & 0xFF for v in values)


def u16(v):
    return struct.pack('<H', v)


def u64(v):
    return struct.pack('<Q', v)


def below(n, value):
    """What FuzzInput::Below(n) reads to return `value`: one byte for n <= 256, else eight."""
    return u8(value) if n <= 256 else u64(value)


def descriptor(alg=1, log_bs=12, salt=b'', size=0, root=None):
    digest_size = 32 if alg == 1 else 64
    root = root if root is not None else hashlib.sha256(b'root').digest()[:digest_size].ljust(digest_size, b'\0')
    out = bytearray(256)
    out[0:4] = u8(1, alg, log_bs, len(salt))
    out[8:16] = u64(size)
    out[16:16 + len(root)] = root
    out[80:80 + len(salt)] = salt
    return bytes(out)


def dm_verity_descriptor(alg='sha256', block=4096, blocks=1, salt=b'', root=None):
    """A dm-verity blob's descriptor: the zero-UUID superblock, then the root hash."""
    digest_size = 32 if alg == 'sha256' else 64
    out = bytearray(512)
    out[0:8] = b'verity\0\0'
    out[8:16] = struct.pack('<II', 1, 1)
    out[32:32 + len(alg)] = alg.encode()
    out[64:80] = struct.pack('<IIQ', block, block, blocks)
    out[80:82] = u16(len(salt))
    out[88:88 + len(salt)] = salt
    return bytes(out) + (root if root is not None else bytes(range(digest_size)))


def proto_field(number, wire_type, payload):
    key = varint(number << 3 | wire_type)
    if wire_type == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload


def varint(v):
    out = b''
    while True:
        byte = v & 0x7F
        v >>= 7
        if v:
            out += u8(byte | 0x80)
        else:
            return out + u8(byte)


def digest_seeds():
    return {
        'sha256_lower': b'sha256:' + b'ab' * 32,
        'sha512_upper': b'sha512:' + b'C0' * 64,
        'short_hex': b'sha256:abc',
        'not_hex': b'sha256:' + b'g' * 64,
        'unknown_algorithm': b'md5:' + b'00' * 16,
        'no_colon': b'sha256',
        'raw_sha256_bytes': u8(1) + bytes(range(32)),
    }


def descriptor_seeds():
    seeds = {
        'sha256_4k': u8(0) + descriptor(size=1 << 20),
        'sha512_1k_salted': u8(0) + descriptor(alg=2, log_bs=10, salt=b'salt', size=12345),
        'empty_blob': u8(0) + descriptor(size=0, root=bytes(32)),
        'huge_size': u8(0) + descriptor(log_bs=6, size=(1 << 63) - 1),
        'not_canonical': u8(0) + descriptor(size=1)[:200] + u8(1) + bytes(55),
        'dm_verity_4k': u8(0) + dm_verity_descriptor(blocks=3000, salt=bytes(32)),
        'dm_verity_sha512_salted': u8(0) + dm_verity_descriptor('sha512', 1024, 7, b's' * 256),
        'dm_verity_uuid': u8(0) + dm_verity_descriptor()[:20] + u8(1) + dm_verity_descriptor()[21:],
    }
    # FsverityDescriptor: 1 hash_algorithm, 2 log_block_size, 3 salt, 4 data_size, 5 root_hash.
    wire = (proto_field(1, 0, 1) + proto_field(2, 0, 12) + proto_field(3, 2, b'salt') +
            proto_field(4, 0, 5000) + proto_field(5, 2, bytes(32)))
    seeds['wire_sha256'] = u8(1) + wire
    seeds['wire_bad_root'] = u8(1) + proto_field(1, 0, 2) + proto_field(2, 0, 10) + proto_field(5, 2, b'x')
    return seeds


# The blobs of stream_verifier_fuzzer.cc, by size.
STREAM_BLOBS = [69 * 1024 + 100, 259 * 1024, 500, 0, 3 * 4096 + 1]


def stream_seed(blob, offset, length=None, in_range=True, chunk=4, alone=False, small_blocks=False,
                sink_calls=None, held=2, held_range=(0, 0), source=None, ops=b''):
    size = STREAM_BLOBS[blob if source is None else source]
    out = u8(blob)
    out += u8(0, source) if source is not None else u8(1)
    out += below(size + 1, offset)
    out += u8(0) if length is None else u8(1) + below(size - offset + 1, length)
    out += u8(1) if in_range else u8(0, 0)
    out += u8(chunk - 1, int(alone), 0 if small_blocks else 1)
    out += u8(1) if sink_calls is None else u8(0, sink_calls)
    out += u8(held)
    if held < 2:
        trusted = STREAM_BLOBS[blob]
        out += below(trusted + 1, held_range[0]) + below(trusted - held_range[0] + 1, held_range[1])
    return out + ops


def stream_verifier_seeds():
    return {
        'honest_whole_small': stream_seed(0, 0),
        'honest_range_3_levels': stream_seed(1, 5000, 40000, chunk=3),
        'honest_one_block': stream_seed(2, 0),
        'honest_empty_blob': stream_seed(3, 0),
        'honest_salted_tail': stream_seed(4, 4000, 9000, alone=True),
        'out_of_range': stream_seed(0, 0, in_range=False),
        'held_tree': stream_seed(1, 100000, 20000, held=0, held_range=(90000, 50000)),
        'shared_cache': stream_seed(0, 1, 30000, held=1, held_range=(0, 70000)),
        'small_block_limit': stream_seed(4, 0, small_blocks=True),
        'sink_refuses': stream_seed(0, 0, chunk=8, sink_calls=2),
        'other_blob': stream_seed(0, 0, 3000, source=2),
        # op 0 (flip a data bit) in message 1 at byte 7, bit 3.
        'flipped_data_bit': stream_seed(0, 0, chunk=2, ops=u8(0, 1) + below(2048, 7) + u8(3)),
        # op 1 (flip a tree bit) in message 0, tree block 1, byte 0, bit 0.
        'flipped_tree_bit': stream_seed(1, 0, 8192, ops=u8(1, 0, 1) + below(1024, 0) + u8(0)),
        # op 2 (drop) message 1, op 3 (duplicate) message 0.
        'dropped_and_duplicated': stream_seed(0, 0, 9000, chunk=1, ops=u8(2, 1, 3, 0, 0)),
        # op 11 (descriptor lie, case 0: data size + 1) in message 0.
        'descriptor_lie': stream_seed(4, 0, ops=u8(11, 0, 0, 1)),
        # op 15 (truncate the stream) at message 2.
        'truncated': stream_seed(0, 0, chunk=4, ops=u8(15, 2)),
        # op 14 (insert a real chunk) at the end, from block 3.
        'misplaced_real_chunk': stream_seed(0, 0, 4096, ops=u8(14, 0, 9, 0, 3, 1)),
    }


SHA256 = b'sha256:' + bytes(hashlib.sha256(b'blob').hexdigest(), 'ascii')
SHA512 = b'sha512:' + bytes(hashlib.sha512(b'blob').hexdigest(), 'ascii')


def name_seeds():
    return {
        'valid_path': u8(0) + b'a/b/c.txt',
        'dot_component': u8(0) + b'a/./b',
        'dotdot_component': u8(0) + b'../etc/passwd',
        'three_dots': u8(0) + b'.../x',
        'leading_slash': u8(0) + b'/abs',
        'trailing_slash': u8(0) + b'dir/',
        'nul': u8(0) + b'a\0b',
        'too_long': u8(0) + b'x' * 1025,
        'name_file': u8(1) + SHA256 + b'\nreadme',
        'name_file_upper_digest': u8(1) + SHA256.upper().replace(b'SHA256', b'sha256') + b'\nx/y',
        'name_file_bad_name': u8(1) + SHA256 + b'\n/x',
        'cli_digest': u8(2) + SHA512,
        'cli_name': u8(2) + b'models/v1.bin',
        'cli_invalid_name': u8(2) + b'a//b',
        'index_ops': u8(3) + bytes([0, 0, 0, 1, 0, 0, 2, 1, 0, 1, 0, 1, 0, 2, 2, 3, 0, 2]),
    }


def name_statement(name, version, issued, expires, seeds, alg=1, digest=None, sign=True, kind=None):
    """A statement as docs/protocol.md ("Signed names") lays it out, signed here with Python's
    `cryptography` (another Ed25519 implementation than the one under test): version 2 with
    `kind` (1 a file, 2 a tree), or version 1 (no kind: a file) without."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    keys = [Ed25519PrivateKey.from_private_bytes(s) for s in seeds]
    spki = [k.public_key().public_bytes(serialization.Encoding.DER,
                                        serialization.PublicFormat.SubjectPublicKeyInfo) for k in keys]
    digest = digest if digest is not None else hashlib.new('sha256' if alg == 1 else 'sha512', name).digest()
    head = (b'verityd name statement v1\n' if kind is None else b'verityd name statement v2\n')
    body = (head + u64(version) + u64(issued) + u64(expires) + (b'' if kind is None else u8(kind)) +
            u8(alg) + digest + u16(len(name)) + name + u8(len(keys)) +
            b''.join(hashlib.sha256(d).digest() for d in spki))
    return body + b''.join(k.sign(body) if sign else bytes(64) for k in keys)


NOW = 1_800_000_000  # the fuzzer's clock


def name_statement_seeds():
    a, b, c = b'a' * 32, b'b' * 32, b'c' * 32
    valid = name_statement(b'model/latest', 7, NOW - 60, NOW + 86400, [a])
    return {
        'stored_valid': u8(0) + valid,
        'stored_two_signers': u8(0) + name_statement(b'a/b', 1, NOW, NOW + 1, [a, c]),
        'stored_sha512': u8(0) + name_statement(b'x', 2**64 - 1, NOW - 10, NOW + 10, [b], alg=2),
        'stored_untrusted': u8(0) + name_statement(b'x', 1, NOW, NOW + 9, [b'd' * 32]),
        'stored_expired': u8(0) + name_statement(b'x', 1, NOW - 9000, NOW - 4000, [a]),
        'stored_future': u8(0) + name_statement(b'x', 1, NOW + 4000, NOW + 9000, [a]),
        'stored_zero_signatures': u8(0) + name_statement(b'x', 1, NOW, NOW + 9, [a], sign=False),
        'stored_truncated': u8(0) + valid[:-1],
        'stored_extended': u8(0) + valid + b'\0',
        'stored_bad_magic': u8(0) + b'verityd name statement v3\n' + valid[26:],
        'stored_v2_file': u8(0) + name_statement(b'model/latest', 8, NOW - 60, NOW + 86400, [a],
                                                 kind=1),
        'stored_v2_tree': u8(0) + name_statement(b'model/latest', 9, NOW - 60, NOW + 86400, [a],
                                                 kind=2),
        'stored_v2_bad_kind': u8(0) + name_statement(b'x', 1, NOW, NOW + 9, [a], kind=3),
        'signed_flip': u8(1) + u16(12) + b'model/latest' + u64(3) + u8(0, 5) + b'hello' +
                       u8(0, 0, 0, 0) + u16(0) + u8(0x80, 0x51, 1, 0) + u8(1) + u16(40) + u8(0, 3),
        'signed_truncate': u8(1) + u16(1) + b'n' + u64(1) + u8(1, 0) + u8(0) * 6 + u8(1, 0, 0, 0) +
                           u8(7) + u16(100) + u8(1),
        'signed_extend': u8(1) + u16(3) + b'a/b' + u64(9) + u8(0, 1) + b'x' + u8(0) * 6 +
                         u8(0xff, 0xff, 0, 0) + u8(2) + u16(0) + u8(2, 4) + b'tail',
        'signed_overwrite': u8(1) + u16(4) + b'name' + u64(2) + u8(0, 0) + u8(0) * 6 +
                            u8(0, 1, 0, 0) + u8(4) + u16(77) + u8(3, 0x41),
    }


def request_seeds():
    read = proto_field(1, 2, SHA256) + proto_field(3, 0, 100) + proto_field(4, 0, 5000) + proto_field(5, 0, 1)
    read_name = proto_field(2, 2, b'a/b') + proto_field(5, 0, 3) + proto_field(6, 0, 4) + proto_field(7, 0, 1)
    overflow = proto_field(1, 2, SHA256) + proto_field(3, 0, 1 << 63) + proto_field(4, 0, 1 << 63)
    params = proto_field(1, 0, 2) + proto_field(2, 0, 1024) + proto_field(3, 2, b'salt')
    header = proto_field(1, 2, params) + proto_field(2, 2, SHA512) + proto_field(3, 2, b'x/y')
    wrong_alg = proto_field(1, 2, proto_field(1, 0, 1)) + proto_field(2, 2, SHA512)
    return {
        'read_by_digest': u8(0) + read,
        'read_by_name': u8(0) + read_name,
        'read_overflow': u8(0) + overflow,
        'read_bad_priority': u8(0) + proto_field(1, 2, SHA256) + proto_field(5, 0, 9),
        'read_no_blob': u8(0) + proto_field(3, 0, 1),
        'put_header': u8(1) + proto_field(1, 2, header),
        'put_defaults': u8(1) + proto_field(1, 2, b''),
        'put_wrong_algorithm': u8(1) + proto_field(1, 2, wrong_alg),
        'put_block_too_small': u8(1) + proto_field(1, 2, proto_field(1, 2, proto_field(2, 0, 32))),
        'list_page': u8(2) + proto_field(1, 0, 50) + proto_field(2, 2, SHA256),
        'list_huge_page': u8(2) + proto_field(1, 0, 1 << 31),
        'stat_by_digest': u8(3) + proto_field(1, 2, SHA512),
        'delete_by_name': u8(4) + proto_field(2, 2, b'n'),
        'delete_bad_digest': u8(4) + proto_field(1, 2, b'sha256:zz'),
        'set_name': u8(5) + proto_field(1, 2, b'a/b') + proto_field(2, 2, SHA256) +
                    proto_field(3, 2, b'statement'),
        'set_name_bad_digest': u8(5) + proto_field(1, 2, b'n') + proto_field(2, 2, b'sha256:zz'),
        'put_statement_without_name': u8(1) + proto_field(1, 2, proto_field(4, 2, b'statement')),
    }


def store_seed(steps, version=True):
    """Steps of store_recovery_fuzzer.cc: each is (step number, argument bytes)."""
    out = u8(1) if version else u8(0)
    for step, args in steps:
        out += u8(step) + args
    return out


def store_recovery_seeds():
    put = lambda k: (0, u8(k))
    quarantine = lambda k: (2, u8(k))
    # WriteName: pool name i (Bool 1, Below(3)) for blob k, correctly named (Below(4) != 0).
    name = lambda i, k: (3, u8(1, i, k, 1))
    # Damage blob k: in blobs/ (Bool 1), member m, action a, then the action's arguments.
    damage = lambda k, m, a, args=b'': (4, u8(k, 1, m, a) + args)
    # WriteRaw: directory d (after a blob choice), entry name, kind, then its arguments.
    raw = lambda k, d, entry, kind, args=b'': (5, u8(k, d, len(entry)) + entry + u8(kind) + args)
    return {
        'empty_store': store_seed([]),
        'no_version': store_seed([put(0)], version=False),
        'all_blobs_named': store_seed([put(0), put(1), put(2), put(3), name(0, 0), name(1, 3), name(2, 1)]),
        'quarantined_and_named': store_seed([quarantine(1), name(0, 1), put(0)]),
        'requarantined_copy': store_seed([put(3), quarantine(3)]),
        'name_of_missing_blob': store_seed([put(0), name(1, 2)]),
        'misnamed_name_file': store_seed([put(0), (3, u8(1, 0, 0, 0, 3))]),
        'truncated_data': store_seed([put(0), damage(0, 0, 0, u16(100))]),
        'flipped_data_byte': store_seed([put(3), damage(3, 0, 1, u16(2000) + u8(0x41))]),
        'flipped_tree_byte': store_seed([put(3), damage(3, 1, 1, u16(10) + u8(0))]),
        'bad_descriptor': store_seed([put(1), damage(1, 2, 1, u16(3) + u8(7))]),
        'missing_tree': store_seed([put(0), damage(0, 1, 2)]),
        'data_is_a_directory': store_seed([put(0), damage(0, 0, 3)]),
        'stray_file_in_shard': store_seed([put(0), raw(0, 4, b'junk', 0, u16(5) + b'hello')]),
        'stray_dir_in_blobs': store_seed([raw(0, 1, b'sha1', 1), put(2)]),
        'symlink_in_names': store_seed([put(0), name(0, 0), raw(0, 6, b'link', 2, u8(1))]),
        'fifo_in_blob_dir': store_seed([put(1), raw(1, 5, b'extra', 3)]),
        'leftover_in_tmp': store_seed([put(0), raw(0, 9, b'put-1', 1), raw(0, 9, b'x', 0, u16(3) + b'abc')]),
    }


def flags_seeds():
    args = lambda *a: u8(1) + b'\0'.join(a)
    env = lambda *values: u8(2) + b''.join(u8(len(v)) + v + u8(1) for v in values) + u8(2, 3) + b'--x' + u8(1) + b'y'
    return {
        'value_hex': u8(0) + b'00ff',
        'value_odd_hex': u8(0) + b'abc',
        'value_decimal': u8(0) + b'4096',
        'value_max_u64': u8(0) + b'18446744073709551615',
        'value_overflow': u8(0) + b'18446744073709551616',
        'value_seconds': u8(0) + b'2.5',
        'value_signed': u8(0) + b'+12',
        'args_get': args(b'-o', b'out', b'--offset=10', b'sha256:' + b'0' * 64),
        'args_abbreviated': args(b'--serv=dns:///x:1', b'--off', b'5', b'name'),
        'args_repeated': args(b'-v', b'-v'),
        'args_missing_value': args(b'a', b'--output'),
        'args_dashdash': args(b'-vo', b'f', b'--', b'-x', b'-'),
        'args_tls': args(b'--tls-cert=c', b'--timeout=0.5', b'x'),
        'environment': env(b'/data', b'0.0.0.0:1', b'10'),
    }


def tree_entry(path, kind, executable=False, size=0, alg=1, digest=None, target=b''):
    """One entry of a tree manifest, as docs/protocol.md lays it out."""
    out = u8(kind) + u16(len(path)) + path
    if kind == 1:
        digest = digest if digest is not None else hashlib.new(
            'sha256' if alg == 1 else 'sha512', path).digest()
        return out + u8(1 if executable else 0) + u64(size) + u8(alg) + digest
    if kind == 3:
        return out + u16(len(target)) + target
    return out


def tree_manifest(entries):
    return b'verityd tree v1\n' + struct.pack('<I', len(entries)) + b''.join(entries)


def chained_detours(links):
    """Links whose targets go 680 names deep into folders the tree does not hold and back, then
    on through the link before: cheap when each link is resolved once, seconds of CPU when each
    is walked again wherever it is met (tree_manifest_fuzzer fails on that)."""
    detour = b'x/' * 680 + b'../' * 680
    names = [b'l%d' % (1000 + i) for i in range(links)]
    return [tree_entry(name, 3, target=detour + (b'end' if i == 0 else names[i - 1]))
            for i, name in enumerate(names)]


def tree_manifest_seeds():
    release = [tree_entry(b'empty', 2), tree_entry(b'latest', 3, target=b'model'),
               tree_entry(b'model', 2), tree_entry(b'model.d', 1),
               tree_entry(b'model/config.json', 1, size=300),
               tree_entry(b'model/current', 3, target=b'weights.bin'),
               tree_entry(b'model/weights.bin', 1, size=1 << 20, alg=2),
               tree_entry(b'run.sh', 1, executable=True, size=40)]
    return {
        'release': tree_manifest(release),
        'empty_tree': tree_manifest([]),
        'one_file': tree_manifest([tree_entry(b'a', 1, size=5)]),
        'escaping_link': tree_manifest([tree_entry(b'd', 2), tree_entry(b'd/up', 3, target=b'..'),
                                        tree_entry(b'x', 3, target=b'd/up/..')]),
        'chained_detours': tree_manifest(chained_detours(40)),
        'link_loop': tree_manifest([tree_entry(b'a', 3, target=b'b'),
                                    tree_entry(b'b', 3, target=b'a')]),
        'dot_dot': tree_manifest([tree_entry(b'a', 2), tree_entry(b'a/../b', 1)]),
        'out_of_order': tree_manifest([tree_entry(b'b', 1), tree_entry(b'a', 1)]),
        'no_parent': tree_manifest([tree_entry(b'a/b', 1)]),
        'absolute': tree_manifest([tree_entry(b'/etc', 2)]),
        'trailing': tree_manifest([tree_entry(b'a', 1)]) + b'x',
    }


TARGETS = {
    'tree_manifest': tree_manifest_seeds,
    'name_statement': name_statement_seeds,
    'flags': flags_seeds,
    'store_recovery': store_recovery_seeds,
    'name': name_seeds,
    'request': request_seeds,
    'digest': digest_seeds,
    'descriptor': descriptor_seeds,
    'stream_verifier': stream_verifier_seeds,
}


def main():
    names = sys.argv[1:] or list(TARGETS)
    for name in names:
        directory = os.path.join(HERE, 'corpus', name)
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory)
        for seed, data in sorted(TARGETS[name]().items()):
            with open(os.path.join(directory, seed), 'wb') as f:
                f.write(data)
        print(f'{name}: {len(os.listdir(directory))} seeds')


if __name__ == '__main__':
    main()
