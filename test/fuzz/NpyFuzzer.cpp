//===- NpyFuzzer.cpp - libFuzzer target: attnc-run's .npy reader ----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// readNpy (attnc-run --q/--k/--v) on hostile files. An input that starts
// with NumPy's magic byte is a .npy file as it is (the seeds: files NumPy
// wrote); any other is decoded into one, so that headers with shapes of any
// 64-bit size, every dtype and version, and too many or too few data bytes
// come within a few mutations: the bytes choose the dtype asked for, the
// header's descr, fortran_order, version and dims (a dim is small, or any
// 64-bit value), and the rest is the data.
//
// A tensor read must hold exactly the header's shape, and the data must
// have held every element: otherwise the fuzzer aborts (a finding).
//
//===----------------------------------------------------------------------===//

#include "FuzzFiles.h"
#include "attnc/Reference/Npy.h"
#include "llvm/Support/raw_ostream.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>

using namespace attnc;

namespace {

struct Decoded {
  std::string file;
  std::vector<uint64_t> dims; // the header's shape; empty for a file as it is
  ElementType type;
};

/// A .npy file from the bytes (see the file comment).
Decoded decode(FuzzedDataProvider &in) {
  Decoded d;
  d.type = in.PickValueInArray({ElementType::f32, ElementType::f16, ElementType::bf16});
  const char *descr = in.PickValueInArray({"<f4", "<f2", "<u2", "<f8", "<i4", "|V2", ">f4"});
  bool fortran = in.ConsumeIntegralInRange(0, 7) == 0;
  int version = in.ConsumeIntegralInRange(0, 4);
  int rank = in.ConsumeIntegralInRange(0, 6);
  // As NumPy writes it: (), (5,), (5, 3).
  std::string shape = "(";
  for (int i = 0; i < rank; ++i) {
    uint64_t dim = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, 9)
                                    : in.ConsumeIntegral<uint64_t>();
    d.dims.push_back(dim);
    shape += (i ? ", " : "") + std::to_string(dim);
  }
  shape += rank == 1 ? ",)" : ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': " +
                       (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
  size_t prefix = version == 1 ? 10 : 12;
  header.append(63 - (prefix + header.size()) % 64, ' ');
  header += '\n';
  d.file = std::string("\x93NUMPY", 6) + char(version) + '\0';
  for (int i = 0; i < (version == 1 ? 2 : 4); ++i)
    d.file += char((header.size() >> (8 * i)) & 0xff);
  d.file += header;
  d.file += in.ConsumeRemainingBytesAsString();
  return d;
}

[[noreturn]] void finding(const std::string &what) {
  std::fprintf(stderr, "attnc-npy-fuzzer: %s\n", what.c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  Decoded d;
  if (size > 0 && data[0] == 0x93) {
    d.file.assign(reinterpret_cast<const char *>(data), size);
    for (ElementType type : {ElementType::f32, ElementType::f16, ElementType::bf16})
      if (auto t = readNpy(fuzz::writeTempFile("in.npy", d.file), type); !t)
        llvm::consumeError(t.takeError());
    return 0;
  }
  d = decode(in);
  llvm::Expected<HostTensor> t = readNpy(fuzz::writeTempFile("in.npy", d.file), d.type);
  if (!t) {
    llvm::consumeError(t.takeError());
    return 0;
  }
  if (t->shape.size() != d.dims.size())
    finding("read a tensor of rank " + std::to_string(t->shape.size()) + " from a header of " +
            std::to_string(d.dims.size()) + " dims");
  unsigned __int128 elements = 1;
  for (size_t i = 0; i < d.dims.size(); ++i) {
    if (uint64_t(t->shape[i]) != d.dims[i])
      finding("dim " + std::to_string(i) + " read as " + std::to_string(t->shape[i]));
    elements *= d.dims[i];
  }
  if (elements != static_cast<unsigned __int128>(t->numElements()))
    finding("read " + std::to_string(t->numElements()) + " elements of shape " +
            t->shapeString());
  return 0;
}
