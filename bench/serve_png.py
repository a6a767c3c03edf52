"""PNG inspection for bench_serve.py: what one response holds (its size in bytes, width × height,
the zlib header's level flag and the filter of each row), read from the PNG's own chunks with the
standard library only.
"""
import collections
import struct
import zlib

FILTER_NAMES = {0: 'none', 1: 'sub', 2: 'up', 3: 'average', 4: 'paeth'}
FLEVEL_NAMES = {0: '0 (level 0-1, or strategy RLE/Huffman)', 1: '1 (level 2-5)', 2: '2 (level 6)', 3: '3 (level 7-9)'}


def png_facts(data):
    """Size, width × height, the zlib header's level flag and the row filters of a PNG."""
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise ValueError('not a PNG')
    pos, idat, ihdr = 8, b'', None
    while pos + 8 <= len(data):
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b'IHDR':
            ihdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = ihdr
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color]
    facts = {'bytes': len(data), 'size': (width, height), 'flevel': idat[1] >> 6}
    if interlace == 0:
        raw = zlib.decompress(idat)
        stride = 1 + (width * channels * depth + 7) // 8
        filters = collections.Counter(raw[row * stride] for row in range(height))
        facts['filters'] = {FILTER_NAMES.get(k, str(k)): v for k, v in sorted(filters.items())}
    return facts


def describe_png(facts):
    filters = ', '.join(f'{k} {v}' for k, v in facts.get('filters', {}).items())
    return (f"{facts['bytes']:,} bytes, {facts['size'][0]} × {facts['size'][1]} px, zlib level flag "
            f"{FLEVEL_NAMES[facts['flevel']]}, row filters: {filters or '?'}")
