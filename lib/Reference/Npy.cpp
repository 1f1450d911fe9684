//===- Npy.cpp - NumPy .npy files for HostTensor --------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The header is a Python dict literal; only the three keys NumPy writes are
// read, with the exact forms NumPy uses. Everything else is an error naming
// the file.
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/Npy.h"
#include "attnc/Reference/KernelCall.h"
#include "attnc/Runtime/ElementCodec.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/EndianStream.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace attnc;
using llvm::StringRef;

static constexpr char kMagic[] = "\x93NUMPY";

static llvm::Error npyError(StringRef path, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": " + message);
}

/// The dtype string NumPy uses for storage type `type`.
static StringRef descrOf(ElementType type) {
  switch (type) {
  case ElementType::f32:
    return "<f4";
  case ElementType::f16:
    return "<f2";
  case ElementType::bf16:
    return "<u2";
  case ElementType::i32:
    return "<i4";
  }
  llvm_unreachable("unknown element type");
}

/// The text after `'key': ` in the header dict, up to the next top-level comma.
static std::optional<StringRef> headerValue(StringRef header, StringRef key) {
  std::string quoted = ("'" + key + "':").str();
  size_t at = header.find(quoted);
  if (at == StringRef::npos)
    return std::nullopt;
  StringRef rest = header.drop_front(at + quoted.size()).ltrim();
  size_t end = rest.starts_with("(") ? rest.find(')') + 1 : rest.find_first_of(",}");
  return rest.take_front(end).trim();
}

static llvm::Expected<llvm::SmallVector<int64_t, 4>>
parseShape(StringRef path, StringRef text) {
  if (!text.consume_front("(") || !text.consume_back(")"))
    return npyError(path, "malformed shape '" + text + "'");
  llvm::SmallVector<int64_t, 4> shape;
  llvm::SmallVector<StringRef> parts;
  text.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    int64_t dim;
    if (part.trim().getAsInteger(10, dim) || dim < 0)
      return npyError(path, "malformed shape entry '" + part.trim() + "'");
    shape.push_back(dim);
  }
  return shape;
}

static double decodeElement(StringRef descr, const char *p) {
  using namespace llvm::support;
  if (descr == "<f8") {
    uint64_t bits = endian::read64le(p);
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  if (descr == "<i4")
    return int32_t(endian::read32le(p));
  if (descr == "<f4") {
    uint32_t bits = endian::read32le(p);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  uint16_t bits = endian::read16le(p); // exact: every f16 and bf16 is a float
  ElementType type = descr == "<f2" ? ElementType::f16 : ElementType::bf16;
  return loadElement(dlpackDtype(type), &bits, 0);
}

llvm::Expected<HostTensor> attnc::readNpy(StringRef path, ElementType type) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!file)
    return npyError(path, "cannot open: " + file.getError().message());
  StringRef bytes = (*file)->getBuffer();
  if (bytes.size() < 10 || !bytes.starts_with(StringRef(kMagic, 6)))
    return npyError(path, "not a .npy file (bad magic)");
  uint8_t major = bytes[6];
  size_t headerLen = major == 1 ? llvm::support::endian::read16le(bytes.data() + 8)
                                : llvm::support::endian::read32le(bytes.data() + 8);
  size_t offset = major == 1 ? 10 : 12;
  if (major < 1 || major > 3 || bytes.size() < offset + headerLen)
    return npyError(path, "truncated or unsupported .npy header");
  StringRef header = bytes.substr(offset, headerLen);

  std::optional<StringRef> descr = headerValue(header, "descr");
  std::optional<StringRef> order = headerValue(header, "fortran_order");
  std::optional<StringRef> shapeText = headerValue(header, "shape");
  if (!descr || !order || !shapeText)
    return npyError(path, "header lacks descr, fortran_order or shape");
  StringRef d = descr->trim("'\"");
  if (d != descrOf(type) && d != "<f8")
    return npyError(path, "dtype '" + d + "' does not fit " + toString(type) +
                              "; expected '" + descrOf(type) + "' or '<f8'");
  if (*order != "False")
    return npyError(path, "Fortran-order arrays are not supported; save a "
                          "C-contiguous array");
  auto shape = parseShape(path, *shapeText);
  if (!shape)
    return shape.takeError();

  // The header's dims are checked against the bytes present before anything is allocated:
  // a product that overflows, or that the file does not hold, is an error, not an allocation.
  int64_t width = d == "<f8" ? 8 : d == "<f4" || d == "<i4" ? 4 : 2, needed = width;
  for (int64_t dim : *shape)
    if (llvm::MulOverflow(needed, dim, needed))
      return npyError(path, "shape " + shapeString(*shape) + " of '" + d +
                                "' elements overflows 64-bit sizes");
  StringRef payload = bytes.drop_front(offset + headerLen);
  if (payload.size() != uint64_t(needed))
    return npyError(path, "holds " + llvm::Twine(payload.size()) +
                              " data bytes but shape " + shapeString(*shape) +
                              " needs " + llvm::Twine(needed));
  HostTensor tensor(type, *shape);
  for (int64_t i = 0, e = tensor.numElements(); i < e; ++i)
    tensor.data[i] = roundTo(type, decodeElement(d, payload.data() + i * width));
  return tensor;
}

static void encodeElement(ElementType type, double value, llvm::raw_ostream &os) {
  using namespace llvm::support;
  if (type == ElementType::i32) {
    endian::write<uint32_t>(os, uint32_t(int32_t(value)), llvm::endianness::little);
    return;
  }
  if (type == ElementType::f32) {
    float f = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    endian::write<uint32_t>(os, bits, llvm::endianness::little);
    return;
  }
  uint16_t bits;
  storeElement(dlpackDtype(type), &bits, 0,
               static_cast<float>(roundTo(type, value))); // exact: rounded first
  endian::write<uint16_t>(os, bits, llvm::endianness::little);
}

llvm::Error attnc::writeNpy(StringRef path, const HostTensor &tensor) {
  std::string shape = "(";
  for (int64_t d : tensor.shape)
    shape += std::to_string(d) + ", ";
  if (tensor.shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if (tensor.shape.size() == 1)
    shape.resize(shape.size() - 1); // "(n,)"
  shape += ")";
  std::string header = ("{'descr': '" + descrOf(tensor.type) +
                        "', 'fortran_order': False, 'shape': " + shape + ", }")
                           .str();
  // Pad with spaces so the data starts 64-byte aligned; end with a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return npyError(path, "cannot write: " + ec.message());
  os.write(kMagic, 6);
  os << '\x01' << '\x00';
  llvm::support::endian::write<uint16_t>(os, header.size(),
                                         llvm::endianness::little);
  os << header;
  for (double v : tensor.data)
    encodeElement(tensor.type, v, os);
  os.close();
  if (os.has_error())
    return npyError(path, "write failed: " + os.error().message());
  return llvm::Error::success();
}
