"""Writes a .npy file with any header shape and any number of data bytes (a hostile file):
make_npy.py PATH "DIM, DIM, ..." DATA_BYTES [DESCR]"""
import struct
import sys

path, dims, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
descr = sys.argv[4] if len(sys.argv) > 4 else "<f4"
header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
header += " " * (63 - len(header) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(bytes(size))
