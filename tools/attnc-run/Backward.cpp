//===- Backward.cpp - attnc-run --reference --backward --------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Backward.h"

#include "attnc/Reference/Backward.h"
#include "attnc/Reference/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>

using namespace attnc;

llvm::Error attnc::runBackward(mlir::attn::AttentionSpecOpInterface op, const HostTensor &q,
                               const HostTensor &k, const HostTensor &v, const ModInputs &mods,
                               llvm::StringRef dOutFile, uint64_t seed, llvm::StringRef dir) {
  HostTensor dOut;
  if (dOutFile.empty()) {
    dOut = randomTensor(q.type, q.shape, seed + 3 * (1ULL << 40)); // as q, k and v are
  } else {
    llvm::Expected<HostTensor> read = readNpy(dOutFile, q.type);
    if (!read)
      return read.takeError();
    dOut = std::move(*read);
  }
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<BackwardResult> grads = evaluateBackward(op, q, k, v, dOut, &mods);
  if (!grads)
    return grads.takeError();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  llvm::outs() << llvm::formatv("backward (reference, double): {0:f3} s\n", seconds);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create %s", dir.str().c_str());
  for (auto [name, tensor] : {std::pair{"d_out", &dOut}, {"dq", &grads->dq},
                              {"dk", &grads->dk}, {"dv", &grads->dv}}) {
    double largest = 0;
    for (double x : tensor->data)
      largest = std::max(largest, std::fabs(x));
    HostTensor file = *tensor;
    file.type = ElementType::f32;
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, llvm::Twine(name) + ".npy");
    if (llvm::Error err = writeNpy(path, file))
      return err;
    llvm::outs() << llvm::formatv("wrote {0} {1} f32 (max |x| {2:e2})\n", path,
                                  file.shapeString(), largest);
  }
  return llvm::Error::success();
}
