#!/usr/bin/env python3
"""Lists the images of a CUDA fatbin (what a cuda-sm80 object embeds) and writes out its ELF
image (the cubin, for nvdisasm).

A fatbin is a 16-byte header (magic 0xba55ed50, version, header size, payload size) and then
images, each headed by its kind (1 PTX, 2 ELF), the size of that header and of its payload,
flags (0x2000: compressed) and its architecture (80 for sm_80).
"""
import argparse
import struct
import sys

MAGIC = 0xBA55ED50
KINDS = {1: "ptx", 2: "elf"}


def images(data):
    magic, _, header, size = struct.unpack_from("<IHHQ", data, 0)
    if magic != MAGIC:
        sys.exit("not a fatbin (magic %#x)" % magic)
    offset = header
    while offset < header + size:
        kind, _, head, payload = struct.unpack_from("<HHIQ", data, offset)
        flags, = struct.unpack_from("<I", data, offset + 16)
        arch, = struct.unpack_from("<I", data, offset + 28)
        yield KINDS.get(kind, str(kind)), arch, bool(flags & 0x2000), \
            data[offset + head:offset + head + payload]
        offset += head + payload


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fatbin")
    parser.add_argument("--elf", help="write the ELF image here")
    args = parser.parse_args()
    with open(args.fatbin, "rb") as f:
        data = f.read()
    for kind, arch, compressed, payload in images(data):
        print("%s sm_%d%s" % (kind, arch, " compressed" if compressed else ""))
        if kind == "elf" and args.elf:
            with open(args.elf, "wb") as f:
                f.write(payload)


if __name__ == "__main__":
    main()
