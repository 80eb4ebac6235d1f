#!/usr/bin/env python3
# Run from the repository root: python3 icons/draw.py
# Draws Flame's icon: a dark rounded square holding a small flame graph (root bar on top).
import struct, zlib, sys
def png(path, n):
    px = [[(0,0,0,0)]*n for _ in range(n)]
    r = n*0.18
    bg = (28, 25, 38, 255)
    def inside_round(x, y):
        cx = min(max(x, r), n-r); cy = min(max(y, r), n-r)
        return (x-cx)**2 + (y-cy)**2 <= r*r
    for y in range(n):
        for x in range(n):
            if inside_round(x+0.5, y+0.5): px[y][x] = bg
    # rows of bars: (x0, x1) in unit space, colour
    rows = [
        [(0.14, 0.86, (236, 112, 44))],
        [(0.14, 0.46, (244, 150, 52)), (0.49, 0.86, (226, 84, 48))],
        [(0.14, 0.28, (250, 190, 70)), (0.31, 0.46, (244, 150, 52)), (0.49, 0.70, (236, 112, 44))],
        [(0.49, 0.60, (250, 214, 96))],
    ]
    top, h, gap = 0.20, 0.13, 0.035
    for i, row in enumerate(rows):
        y0 = top + i*(h+gap); y1 = y0 + h
        for x0, x1, c in row:
            for y in range(int(y0*n), int(y1*n)):
                for x in range(int(x0*n), int(x1*n)):
                    px[y][x] = c + (255,)
    raw = b''.join(b'\x00' + b''.join(bytes(p) for p in row) for row in px)
    def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t+d) & 0xffffffff)
    data = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', n, n, 8, 6, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b'')
    open(path, 'wb').write(data)
for name, n in [('32x32.png', 32), ('128x128.png', 128), ('128x128@2x.png', 256), ('icon.png', 512)]:
    png('icons/' + name, n)
