"""The names a shared object exports, read from its ELF dynamic symbol table (.dynsym), so
that attnc.load finds every kernel's attnc_describe_ function without a header."""
import struct

_SHT_DYNSYM = 11
_SHN_UNDEF = 0


def exported_functions(path):
    """Names of the functions and objects `path` (a 64-bit little-endian ELF shared object)
    defines in its dynamic symbol table."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("%s is not a 64-bit little-endian ELF shared object" % path)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    names = []
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind != _SHT_DYNSYM:
            continue
        strtab = sections[link][4]
        for at in range(offset, offset + size, entsize or 24):
            name, _, _, shndx, _, _ = struct.unpack_from("<IBBHQQ", data, at)
            if shndx == _SHN_UNDEF or name == 0:
                continue
            end = data.index(b"\0", strtab + name)
            names.append(data[strtab + name:end].decode())
    return names
