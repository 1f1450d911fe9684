//===- attnc-run.cpp - run attention specs on concrete inputs -------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `attnc-run --reference SPEC` evaluates a spec with the reference evaluator
// on seeded inputs (or q/k/v .npy files), writes every input and output as
// .npy and prints a short summary. With `--tiled BQxBKV` it first runs
// attn-normalize and attn-tile-flash on the kernel, in process, and evaluates
// the resulting attn.flash tile by tile instead (same inputs, same outputs).
// `attnc-run --so K.so SPEC` runs the kernel compiled with `attnc --emit=so`
// on the same inputs, checks it against the reference (unless
// --no-reference), and reports time, GFLOPS, % of FMA peak and memory.
//
//===----------------------------------------------------------------------===//

#include "Backward.h"
#include "BandwidthProbe.h"
#include "Compiled.h"
#include "Linear.h"
#include "MultiHead.h"
#include "Projection.h"
#include "PeakProbe.h"
#include "TanhProbe.h"

#include "attnc/Dialect/Attn/ModInputs.h"
#include "attnc/InitAll.h"
#include "attnc/Tools/HelpOptions.h"
#include "attnc/Tools/SpecFile.h"
#include "attnc/Reference/Evaluator.h"
#include "attnc/Reference/KvCache.h"
#include "attnc/Reference/Npy.h"
#include "attnc/Reference/Varlen.h"
#include "attnc/Reference/WeightsSvg.h"
#include "attnc/Transforms/Passes.h"
#include "attnc/Transforms/TileClassifier.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <chrono>
#include <cmath>
#include <thread>

using namespace attnc;
using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory problemCat("attnc-run: the problem and its inputs");
static cl::OptionCategory referenceCat("attnc-run: reference mode (--reference)");
static cl::OptionCategory compiledCat("attnc-run: compiled kernel mode (--so)");

static cl::opt<std::string> specFile(cl::Positional, cl::desc("SPEC"), cl::cat(problemCat));
static cl::opt<bool> fmaPeak("fma-peak",
                             cl::desc("Only measure and print the FMA peak (--num-threads)"), cl::cat(compiledCat));
static cl::opt<bool> bf16Peak("bf16-peak",
                              cl::desc("Only measure and print the bf16 dot-product (vdpbf16ps) "
                                       "peak (--num-threads); exit status 1 without AVX512-BF16"),
                              cl::cat(compiledCat));
static cl::opt<bool> tanhPeak(
    "tanh-peak",
    cl::desc("Only measure and print the additive kernels' roofline (--num-threads): steps "
             "acc += v tanh(k + q) a second, from registers, as the kernels compute them"),
    cl::cat(compiledCat));
static cl::opt<bool> bandwidthPeak(
    "bandwidth-peak",
    cl::desc("Only measure and print the memory read bandwidth (--num-threads): a buffer "
             "over 4x the last-level cache, read on the threads at once"),
    cl::cat(compiledCat));
static cl::opt<bool> reference("reference",
                               cl::desc("Evaluate with the reference evaluator"), cl::cat(referenceCat));
static cl::opt<std::string> kernelName("kernel",
                                       cl::desc("Kernel to run when SPEC holds several"), cl::cat(problemCat));
static cl::opt<int64_t> batch("batch", cl::desc("Batch size"), cl::init(1), cl::cat(problemCat));
static cl::opt<int64_t> seqQ("seq-q", cl::desc("Query length"), cl::init(128), cl::cat(problemCat));
static cl::opt<int64_t> seqKv("seq-kv", cl::desc("Key/value length (default: seq-q)"),
                              cl::init(-1), cl::cat(problemCat));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of the generated inputs"),
                              cl::init(0), cl::cat(problemCat));
static cl::opt<std::string> kvLens(
    "kv-lens",
    cl::desc("A kernel with kv_cache: each sequence's KV length, comma-separated (one per "
             "batch entry, each in [0, seq-kv]), or 'random' (seeded); default: all seq-kv. "
             "Paged kernels get seq-kv / page_size pages per sequence in a seeded random order. "
             "With varlen: the keys each packed sequence uses, each at most its KV length. "
             "A multi-head attention with key_padding = lengths: the keys each sequence "
             "attends"),
    cl::cat(problemCat));
static cl::opt<std::string> seqLens(
    "seq-lens",
    cl::desc("A kernel with varlen = cu_seqlens: each sequence's query and KV lengths as "
             "Q:KV, comma-separated (one per batch entry, Q in [0, seq-q], KV in [0, "
             "seq-kv]), or 'random' (seeded); default: all seq-q:seq-kv. The sequences are "
             "packed end to end for the kernel"),
    cl::cat(problemCat));
static cl::opt<std::string> qFile("q", cl::desc("q as .npy (with --k, --v)"), cl::cat(problemCat));
static cl::opt<std::string> kFile("k", cl::desc("k as .npy"), cl::cat(problemCat));
static cl::opt<std::string> vFile("v", cl::desc("v as .npy"), cl::cat(problemCat));
static cl::list<std::string> inputFiles(
    "input", cl::desc("NAME=FILE.npy: an input the spec's mods read (its `inputs`), int32 or "
                      "float32 as declared, in the shape its dims give; one per input"),
    cl::value_desc("NAME=FILE"), cl::cat(problemCat));
static cl::opt<std::string> outDir("o", cl::desc("Directory for the .npy files"),
                                   cl::init("."), cl::cat(problemCat));
static cl::opt<bool> backward(
    "backward",
    cl::desc("With --reference: also the gradients of out on q, k and v (in double) for a "
             "d_out (--dout, else seeded), written with -o as d_out, dq, dk, dv .npy"),
    cl::cat(referenceCat));
static cl::opt<std::string> dOutFile("dout", cl::desc("With --backward or a backward spec "
                                                     "(outputs = [dq, dk, dv]): d_out as .npy"),
                                     cl::cat(referenceCat));
static cl::opt<std::string> dLseFile(
    "dlse", cl::desc("With --backward or a backward spec: lse's gradient as .npy (float32 "
                     "[batch, heads, seq_q]) or 'seeded' (default: none, passed as NULL)"),
    cl::cat(referenceCat));
static cl::opt<std::string> tiled(
    "tiled", cl::desc("With --reference: evaluate the tiled form (attn.flash) "
                      "tile by tile, block_q x block_kv, e.g. 64x64"),
    cl::value_desc("BQxBKV"), cl::cat(referenceCat));
static cl::opt<std::string> weightsSvg(
    "weights-svg",
    cl::desc("Draw the attention weights of batch 0 as SVG (with --so: the compiled kernel's, "
             "whose spec outputs weights)"),
    cl::cat(referenceCat));
static cl::opt<std::string> soFile("so", cl::desc("Run this kernel (attnc --emit=so)"), cl::cat(compiledCat));
static cl::opt<bool> noReference("no-reference",
                                 cl::desc("With --so: skip the reference check (large sizes)"), cl::cat(compiledCat));
// The runtime caps a launch at 256 threads; the peak probes run exactly this many.
static constexpr int kMaxThreads = 256;
static cl::opt<int> threads("num-threads", cl::desc("With --so: threads (0 = all cores, at most 256)"),
                            cl::init(0), cl::cat(compiledCat));
static cl::opt<int> repeat("repeat", cl::desc("With --so: timed runs"), cl::init(5), cl::cat(compiledCat));
static cl::opt<bool> coldCache("cold-cache", cl::desc("With --so: before each run, read a buffer of twice the last-level cache, so the kernel's tensors come from memory (decode: a KV cache that a cache larger than it would otherwise hold)"), cl::cat(compiledCat));
// Without --rtol / --atol, the numeric matrix's tolerance for the spec's dtype
// (defaultTolerance).
static cl::opt<double> relTol("rtol", cl::desc("With --so: relative tolerance (default per dtype: f32 2e-5, f16 4e-3, bf16 2e-2)"), cl::cat(compiledCat));
static cl::opt<double> absTol("atol", cl::desc("With --so: absolute tolerance (default per dtype: f32 2e-6, f16 1e-3, bf16 8e-3, for inputs in [-1, 1); larger inputs scale it: out's by max |v| max |q| max |k|, lse's by max |q| max |k|)"), cl::cat(compiledCat));
static cl::opt<int> callers("callers", cl::desc("With --so: then call the kernel from this many threads at once (each --num-threads), --repeat rounds: time against the same calls one after another, and require bit-identical outputs"), cl::init(1), cl::cat(compiledCat));
static cl::opt<bool> hostParallelFor("host-parallel-for", cl::desc("With --so: run the kernel's helper threads through attnc_set_parallel_for, on attnc-run's own threads, as a host with a thread pool does"), cl::cat(compiledCat));
static cl::opt<int64_t> steps(
    "steps",
    cl::desc("With --so and a linear attention kernel with state = carry: also run the "
             "sequence as a prefill of seq-q - N rows and N calls of one row, each from the "
             "previous call's final state, and check those against the reference too"),
    cl::init(0), cl::cat(compiledCat));
static cl::opt<bool> noBias(
    "no-bias", cl::desc("A multi-head attention kernel: pass both biases as NULL (none)"),
    cl::cat(problemCat));
static cl::opt<bool> noPeak("no-peak", cl::desc("With --so: skip the FMA peak probe"), cl::cat(compiledCat));

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<attn::KernelOp> selectKernel(ModuleOp module) {
  llvm::SmallVector<attn::KernelOp> kernels(module.getOps<attn::KernelOp>());
  if (kernels.empty())
    return error(specFile + " holds no attn.kernel");
  for (attn::KernelOp kernel : kernels)
    if (kernelName.empty() ? kernels.size() == 1 : kernel.getSymName() == kernelName)
      return kernel;
  std::string names;
  for (attn::KernelOp kernel : kernels)
    names += " @" + kernel.getSymName().str();
  return error((kernelName.empty() ? "--kernel is needed to choose among"
                                   : "no kernel @" + kernelName + "; choose among") +
               llvm::Twine(names));
}

struct Inputs {
  HostTensor q, k, v;
  KvCache cache; // a kv_cache kernel's lengths and pages
  Varlen varlen; // a varlen kernel's lengths
  ModInputs mods; // the tensors the mods read (--input)
  bool seeded = false;

  /// seq_q * seq_kv, read off the tensors in the spec's layout.
  int64_t cellsPerHead(attn::AttentionSpecOpInterface op) const {
    int seqDim = op.getLayout() == attn::Layout::bhsd ? 2 : 1;
    return q.shape[seqDim] * k.shape[seqDim];
  }
};

/// A kv_cache kernel's lengths (--kv-lens) and pages for k's batch and
/// length; a varlen kernel's sequence lengths (--seq-lens).
llvm::Expected<Inputs> withSequenceLengths(attn::AttentionSpecOpInterface op, Inputs in) {
  if (in.k.shape.size() != 4 || in.q.shape.size() != 4)
    return error("q and k have shapes " + in.q.shapeString() + " and " + in.k.shapeString() +
                 "; the spec's have 4 dimensions (varlen: padded bshd, packed for the kernel)");
  int seqDim = op.getLayout() == attn::Layout::bhsd ? 2 : 1;
  llvm::Expected<KvCache> cache = makeKvCache(op, in.k.shape[0], in.k.shape[seqDim], kvLens, seed);
  if (!cache)
    return cache.takeError();
  in.cache = std::move(*cache);
  llvm::Expected<Varlen> varlen =
      makeVarlen(op, in.q.shape[0], in.q.shape[seqDim], in.k.shape[seqDim], seqLens, kvLens, seed);
  if (!varlen)
    return varlen.takeError();
  in.varlen = std::move(*varlen);
  return in;
}

/// The spec's mod inputs from --input NAME=FILE.npy, each as declared; the
/// reference checks their shapes.
llvm::Error loadModInputs(attn::AttentionSpecOpInterface op, ModInputs &mods) {
  mlir::ArrayAttr decls = op.getInputsAttr();
  for (const std::string &given : inputFiles) {
    auto [name, file] = llvm::StringRef(given).split('=');
    attn::ModInputAttr decl = attn::findModInput(decls, name);
    if (file.empty() || !decl)
      return error("--input " + given + ": expected NAME=FILE.npy with NAME one of the "
                   "spec's inputs");
    llvm::Expected<HostTensor> t = readNpy(file, *elementTypeOf(decl.getElementType()));
    if (!t)
      return t.takeError();
    mods[name] = std::move(*t);
  }
  if (!decls)
    return llvm::Error::success();
  for (auto decl : decls.getAsRange<attn::ModInputAttr>())
    if (!mods.count(decl.getName().getValue()))
      return error("the spec's mods read input '" + decl.getName().getValue() +
                   "': give it with --input " + decl.getName().getValue() + "=FILE.npy");
  return llvm::Error::success();
}

/// Reads q/k/v from .npy, or generates them from --seed (q, k and v use
/// seeds seed, seed + 2^40 and seed + 2^41, so streams never overlap).
llvm::Expected<Inputs> loadInputs(attn::AttentionSpecOpInterface op, ElementType type) {
  Inputs in;
  if (llvm::Error err = loadModInputs(op, in.mods))
    return std::move(err);
  int given = !qFile.empty() + !kFile.empty() + !vFile.empty();
  if (given == 3) {
    for (auto [file, tensor] : {std::pair{&qFile, &in.q}, {&kFile, &in.k}, {&vFile, &in.v}}) {
      llvm::Expected<HostTensor> t = readNpy(*file, type);
      if (!t)
        return t.takeError();
      *tensor = std::move(*t);
    }
    return withSequenceLengths(op, std::move(in));
  }
  if (given != 0)
    return error("give all of --q, --k and --v, or none of them for seeded inputs");
  ProblemSize size{batch, seqQ, seqKv < 0 ? seqQ : seqKv};
  if (llvm::Error err = checkProblemSize(op, size))
    return std::move(err);
  if (llvm::Error err = checkFitsInMemory(op, size))
    return std::move(err);
  in.q = randomTensor(type, tensorShape(op, size, true), seed);
  in.k = randomTensor(type, tensorShape(op, size, false), seed + (1ULL << 40));
  in.v = randomTensor(type, tensorShape(op, size, false), seed + (1ULL << 41));
  in.seeded = true;
  return withSequenceLengths(op, std::move(in));
}

/// A kv_cache or varlen call's int32 inputs as OUT/lengths.json (kv_lens, block_table
/// [batch][max_pages]; q_lens and kv_lens of packed sequences), so that a kernel run
/// elsewhere (the cross-compiled runner) gets the very lengths and pages of the reference.
llvm::Error writeLengths(const Inputs &in) {
  llvm::json::Object o;
  auto ints = [](llvm::ArrayRef<int32_t> v) {
    return llvm::json::Array(std::vector<llvm::json::Value>(v.begin(), v.end()));
  };
  if (in.cache.pageSize >= 0) {
    o["kv_lens"] = ints(in.cache.lens);
    llvm::json::Array table;
    for (size_t at = 0; at < in.cache.table.size(); at += size_t(in.cache.maxPages))
      table.push_back(ints(llvm::ArrayRef(in.cache.table).slice(at, in.cache.maxPages)));
    o["block_table"] = std::move(table);
    o["num_pages"] = in.cache.numPages;
  } else if (in.varlen.active()) {
    o["q_lens"] = ints(in.varlen.qLens);
    o["kv_lens"] = ints(in.varlen.kvLens);
    if (!in.varlen.kvUsed.empty())
      o["kv_used"] = ints(in.varlen.kvUsed);
  } else {
    return llvm::Error::success();
  }
  llvm::SmallString<128> path(outDir);
  llvm::sys::path::append(path, "lengths.json");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return error("cannot write " + path + ": " + ec.message());
  os << llvm::json::Value(std::move(o)) << "\n";
  llvm::outs() << "wrote " << path << "\n";
  return llvm::Error::success();
}

llvm::Error writeOutputs(const Inputs &in, const ReferenceResult &result,
                         bool keepWeights) {
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
    return error("cannot create " + outDir + ": " + ec.message());
  if (llvm::Error err = writeLengths(in))
    return err;
  std::vector<std::pair<const char *, const HostTensor *>> files;
  if (in.seeded)
    files = {{"q", &in.q}, {"k", &in.k}, {"v", &in.v}};
  files.push_back({"out", &result.out});
  files.push_back({"lse", &result.lse});
  if (keepWeights)
    files.push_back({"weights", &result.weights});
  for (auto [name, tensor] : files) {
    if (tensor->empty())
      continue;
    llvm::SmallString<128> path(outDir);
    llvm::sys::path::append(path, llvm::Twine(name) + ".npy");
    if (llvm::Error err = writeNpy(path, *tensor))
      return err;
    llvm::outs() << "wrote " << path << " " << tensor->shapeString() << " "
                 << toString(tensor->type) << "\n";
  }
  return llvm::Error::success();
}

llvm::Error drawWeights(attn::AttentionSpecOpInterface op, const HostTensor &weights,
                        llvm::StringRef whose) {
  std::error_code ec;
  llvm::raw_fd_ostream os(weightsSvg, ec);
  if (ec)
    return error("cannot write " + weightsSvg + ": " + ec.message());
  std::string title;
  llvm::raw_string_ostream t(title);
  t << "@" << op->getParentOfType<attn::KernelOp>().getSymName() << ": " << whose
    << "attention weights, batch 0, seq_q " << weights.shape[2] << ", seq_kv "
    << weights.shape[3] << ", mask " << op.getMask();
  writeWeightsSvg(weights, title, os);
  llvm::outs() << "drew " << weightsSvg << "\n";
  return llvm::Error::success();
}

void printTiles(attn::FlashOp flash, const TileCounts &tiles) {
  llvm::outs() << llvm::formatv(
      "tiles {0}x{1}: {2} visited ({3} full, {4} partial), {5} empty skipped\n",
      flash.getTileQ(), flash.getTileKv(), tiles.visited(), tiles.full,
      tiles.partial, tiles.empty);
}

void printSummary(attn::AttentionSpecOpInterface op, const Inputs &in,
                  const ReferenceResult &result, double seconds) {
  llvm::raw_ostream &os = llvm::outs();
  os << "kernel @" << op->getParentOfType<attn::KernelOp>().getSymName()
     << ": " << op.getHeads() << " heads (" << op.getKvHeads()
     << " kv), head_dim " << op.getDim() << ", " << op.getDtype() << ", "
     << stringifyLayout(op.getLayout()) << ", mask " << op.getMask() << "\n";
  os << "inputs: q " << in.q.shapeString() << ", k " << in.k.shapeString()
     << ", v " << in.v.shapeString();
  if (in.seeded)
    os << " (seeded, seed " << seed << ")";
  os << "\n";
  double pairs = double(in.q.shape[0]) * op.getHeads() * in.cellsPerHead(op);
  os << llvm::formatv("kept pairs: {0} of {1:f0} ({2:f1}%)\n", result.keptPairs,
                      pairs, 100.0 * result.keptPairs / pairs);
  if (!result.out.empty()) {
    double maxAbs = 0, sum = 0;
    for (double x : result.out.data) {
      maxAbs = std::max(maxAbs, std::fabs(x));
      sum += x;
    }
    os << llvm::formatv("out: mean {0:e3}, max |x| {1:e3}\n",
                        sum / result.out.numElements(), maxAbs);
  }
  auto flash = llvm::dyn_cast<attn::FlashOp>(op.getOperation());
  if (flash)
    printTiles(flash, result.tiles);
  os << llvm::formatv("{0} evaluation: {1:f3} s\n",
                      flash ? "tiled reference" : "reference", seconds);
}

/// (b, h, q, kv) pairs the mask attribute keeps, for GFLOPS without the
/// reference; mask_mod is not counted.
double keptPairsOfMask(attn::AttentionSpecOpInterface op, const Inputs &in) {
  int seqDim = op.getLayout() == attn::Layout::bhsd ? 2 : 1;
  if (in.varlen.active()) { // each sequence's own lengths
    double pairs = 0;
    for (size_t b = 0; b < in.varlen.qLens.size(); ++b)
      pairs += double(attn::countKeptPairs(op.getMask(), in.varlen.qLens[b],
                                           in.varlen.kvLens[b]));
    return pairs * op.getHeads();
  }
  return double(attn::countKeptPairs(op.getMask(), in.q.shape[seqDim],
                                     in.k.shape[seqDim])) *
         in.q.shape[0] * op.getHeads();
}

/// With -o: the compiled kernel's outputs as .npy; with --weights-svg, its
/// weights drawn.
llvm::Error writeCompiledOutputs(attn::AttentionSpecOpInterface op, const Inputs &in,
                                 const CompiledOutputs &got) {
  if (outDir.getNumOccurrences()) {
    ReferenceResult files;
    files.out = got.out;
    files.lse = got.lse;
    files.weights = got.weights;
    if (llvm::Error err = writeOutputs(in, files, /*keepWeights=*/true))
      return err;
  }
  if (weightsSvg.empty())
    return llvm::Error::success();
  if (got.weights.empty())
    return error("--weights-svg with --so draws the kernel's weights: add weights to the "
                 "spec's outputs (outputs = [out, weights]) and compile it again");
  if (in.cellsPerHead(op) > kMaxSvgCells)
    return error("--weights-svg draws at most " + llvm::Twine(kMaxSvgCells) +
                 " cells per head (seq_q * seq_kv); use shorter sequences");
  return drawWeights(op, got.weights, "compiled kernel's ");
}

/// The reference, with per-sequence lengths for a kv_cache or varlen kernel.
llvm::Expected<ReferenceResult> evaluate(attn::AttentionSpecOpInterface op, const Inputs &in,
                                         bool wantWeights = false) {
  if (in.cache.pageSize >= 0)
    return evaluateWithLengths(op, in.q, in.k, in.v, in.cache.lens, {}, &in.mods);
  if (in.varlen.active())
    return evaluateWithLengths(op, in.q, in.k, in.v,
                               in.varlen.kvUsed.empty() ? in.varlen.kvLens : in.varlen.kvUsed,
                               in.varlen.qLens, &in.mods, in.varlen.kvLens);
  return evaluateReference(op, in.q, in.k, in.v, wantWeights, 0, &in.mods);
}

llvm::Error runCompiledMode(attn::AttentionSpecOpInterface op, const Inputs &in) {
  if ((in.cache.pageSize >= 0 || in.varlen.active() || !in.mods.empty()) && callers > 1)
    return error("--callers is not available for kernels with kv_cache, varlen or inputs yet");
  std::optional<ReferenceResult> ref;
  if (!noReference) {
    llvm::Expected<ReferenceResult> r = evaluate(op, in);
    if (!r)
      return r.takeError();
    ref = std::move(*r);
  }
  CompiledOptions options;
  options.soPath = soFile;
  options.threads = threads;
  options.repeat = repeat;
  options.coldCache = coldCache;
  options.measurePeak = !noPeak;
  options.callers = callers;
  options.hostParallelFor = hostParallelFor;
  options.kvCache = &in.cache;
  options.varlen = &in.varlen;
  options.inputs = &in.mods;
  double pairs = ref ? double(ref->keptPairs) : keptPairsOfMask(op, in);
  llvm::Expected<CompiledOutputs> got = runCompiled(op, in.q, in.k, in.v, pairs, options);
  if (!got)
    return got.takeError();
  if (llvm::Error err = writeCompiledOutputs(op, in, *got))
    return err;
  if (!ref)
    return llvm::Error::success();
  // The matrix's tolerance holds for inputs in [-1, 1); larger inputs scale
  // the absolute part, unless --atol says otherwise.
  Tolerance tol = defaultTolerance(*elementTypeOf(op.getDtype()));
  if (relTol.getNumOccurrences())
    tol.rtol = relTol;
  Tolerance outTol = tol, lseTol = tol;
  if (absTol.getNumOccurrences()) {
    outTol.atol = lseTol.atol = absTol;
  } else {
    InputMagnitude m = inputMagnitude(in.q, in.k, in.v);
    outTol = scaledOutTolerance(tol, m);
    lseTol = scaledLseTolerance(tol, m);
    if (m.values > 1 || m.scores > 1)
      llvm::outs() << llvm::formatv("default atol scaled to the inputs: max |v| {0:g}, "
                                    "max |q| max |k| {1:g}\n",
                                    m.values, m.scores);
  }
  bool ok = true;
  if (!got->out.empty())
    ok &= compareOutputs("out", got->out, ref->out, outTol.rtol, outTol.atol);
  if (!got->lse.empty())
    ok &= compareOutputs("lse", got->lse, ref->lse, lseTol.rtol, lseTol.atol);
  // A weight p = exp(s - lse) is off by p times the score's error, which
  // lse's tolerance bounds.
  if (!got->weights.empty())
    ok &= compareOutputs("weights", got->weights, ref->weights, lseTol.rtol, lseTol.atol);
  return ok ? llvm::Error::success()
            : error("the compiled kernel does not match the reference");
}

llvm::Error runReferenceMode(attn::AttentionSpecOpInterface op, const Inputs &in) {
  bool wantSvg = !weightsSvg.empty();
  if (wantSvg && in.q.shape.size() == 4 && in.k.shape.size() == 4 &&
      in.cellsPerHead(op) > kMaxSvgCells)
    return error("--weights-svg draws at most " + llvm::Twine(kMaxSvgCells) +
                 " cells per head (seq_q * seq_kv); use shorter sequences");
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<ReferenceResult> result = evaluate(op, in, wantSvg);
  if (!result)
    return result.takeError();
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start).count();
  printSummary(op, in, *result, seconds);
  if (llvm::Error err =
          writeOutputs(in, *result, op.hasOutput(attn::OutputKind::weights)))
    return err;
  if (backward)
    if (llvm::Error err =
            runBackward(op, in.q, in.k, in.v, in.mods, {dOutFile, dLseFile}, seed, outDir))
      return err;
  return wantSvg ? drawWeights(op, result->weights, "") : llvm::Error::success();
}

struct TileShape {
  int64_t q = 0, kv = 0;
};

/// --tiled: BQxBKV, both positive.
llvm::Expected<TileShape> parseTiled() {
  auto [q, kv] = llvm::StringRef(tiled).split('x');
  TileShape tile;
  if (q.getAsInteger(10, tile.q) || kv.getAsInteger(10, tile.kv) ||
      tile.q <= 0 || tile.kv <= 0)
    return error("--tiled expects BQxBKV, two positive tile sizes such as "
                 "64x64 or 37x23; got '" + tiled + "'");
  return tile;
}

/// Runs attn-normalize and attn-tile-flash on the kernel of `op` alone: the
/// other kernels of the file are erased first, since they may ask for
/// `weights`, which the tiled form cannot have. `op` is gone afterwards.
llvm::Expected<attn::FlashOp> tileKernel(ModuleOp module, attn::AttentionSpecOpInterface op,
                                         TileShape tile) {
  attn::KernelOp kernel = op->getParentOfType<attn::KernelOp>();
  if (auto flash = dyn_cast<attn::FlashOp>(op.getOperation()))
    return error(attnc::locationText(flash.getLoc()) + ": @" + kernel.getSymName() +
                 " already holds its tiled form (attn.flash, tiles " +
                 llvm::Twine(flash.getTileQ()) + "x" + llvm::Twine(flash.getTileKv()) +
                 "); --tiled tiles a spec (attn.attention): run it without --tiled");
  if (op.hasOutput(attn::OutputKind::weights))
    return error("@" + kernel.getSymName() +
                 " asks for `weights`, which the tiled form (attn.flash) does "
                 "not have: drop it from the spec's outputs, or run without "
                 "--tiled");
  for (attn::KernelOp other :
       llvm::make_early_inc_range(module.getOps<attn::KernelOp>()))
    if (other != kernel)
      other.erase();
  attn::AttnTileFlashPassOptions options;
  options.blockQ = tile.q;
  options.blockKv = tile.kv;
  PassManager pm(module->getContext());
  pm.addPass(attn::createAttnNormalizePass());
  pm.addPass(attn::createAttnTileFlashPass(options));
  if (failed(pm.run(module)))
    return error("attn-normalize and attn-tile-flash failed on @" +
                 kernel.getSymName());
  return kernel.getFlash();
}

llvm::Error runTiledReferenceMode(ModuleOp module, attn::AttentionSpecOpInterface op,
                                  const Inputs &in, TileShape tile) {
  if (!weightsSvg.empty())
    return error("--weights-svg draws the weights, which only the untiled "
                 "reference computes; drop --tiled");
  llvm::Expected<attn::FlashOp> flash = tileKernel(module, op, tile);
  if (!flash)
    return flash.takeError();
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<ReferenceResult> result =
      evaluateFlash(*flash, in.q, in.k, in.v, &in.mods);
  if (!result)
    return result.takeError();
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start).count();
  printSummary(*flash, in, *result, seconds);
  return writeOutputs(in, *result, /*keepWeights=*/false);
}

/// A backward spec (outputs = [dq, dk, dv]): its reference gradients, or
/// with --so its compiled kernel against them.
llvm::Error runBackwardKernel(attn::AttentionSpecOpInterface op, const Inputs &in) {
  if (in.cache.pageSize >= 0 || in.varlen.active() || !tiled.empty())
    return error("a backward kernel takes no --kv-lens, --seq-lens or --tiled");
  if (soFile.empty())
    return runBackward(op, in.q, in.k, in.v, in.mods, {dOutFile, dLseFile}, seed, outDir);
  CompiledBackwardOptions options;
  options.soPath = soFile;
  options.loss = {dOutFile, dLseFile};
  options.dir = outDir.getNumOccurrences() ? std::string(outDir) : std::string();
  options.seed = seed;
  options.threads = threads;
  options.repeat = repeat;
  options.measurePeak = !noPeak;
  if (relTol.getNumOccurrences())
    options.rtol = relTol;
  options.noReference = noReference;
  options.keptPairs = keptPairsOfMask(op, in);
  return runCompiledBackward(op, in.q, in.k, in.v, in.mods, options);
}

/// The sizes, seed and timing options of a seeded run (a family beside
/// attention), or an error for the attention-only options given (--kv-lens
/// too, unless the family takes it).
llvm::Error seededRunOptions(SeededRunOptions &o, llvm::StringRef family,
                             bool takesKvLens = false) {
  if (!qFile.empty() || !kFile.empty() || !vFile.empty() || !inputFiles.empty() ||
      (!kvLens.empty() && !takesKvLens) || !seqLens.empty() || !tiled.empty() || backward)
    return error("a " + family + " kernel runs on seeded inputs (--batch, --seq-q, --seq-kv, "
                 "--seed" + (takesKvLens ? ", --kv-lens" : "") + ") alone");
  o.batch = batch;
  o.seq = seqQ;
  o.seqKv = seqKv < 0 ? seqQ : seqKv;
  o.seed = seed;
  o.soPath = soFile;
  o.dir = soFile.empty() || outDir.getNumOccurrences() ? std::string(outDir) : std::string();
  o.threads = threads;
  o.repeat = repeat;
  o.measurePeak = !noPeak;
  o.noReference = noReference;
  if (relTol.getNumOccurrences())
    o.rtol = relTol;
  return llvm::Error::success();
}

/// A linear attention spec: its reference on seeded inputs, or with --so
/// its compiled kernel against it.
llvm::Error runLinearKernel(attn::LinearAttentionOp op) {
  LinearRunOptions options;
  if (llvm::Error err = seededRunOptions(options, "linear attention"))
    return err;
  options.steps = steps;
  return runLinear(op, options);
}

/// A multi-head attention spec: its reference on seeded x, weights and
/// biases, or with --so its compiled kernel against it.
llvm::Error runMultiHeadKernel(attn::MultiHeadAttentionOp op) {
  MultiHeadRunOptions options;
  if (llvm::Error err = seededRunOptions(options, "multi-head attention", true))
    return err;
  if (options.seqKv != options.seq)
    return error("a multi-head attention kernel is self-attention: one length, --seq-q");
  options.noBias = noBias;
  options.keyLengths = kvLens;
  return runMultiHead(op, options);
}

/// A projection spec: its reference on seeded x, weight and bias, or with
/// --so its compiled kernel against it.
llvm::Error runProjectionKernel(attn::ProjectionOp op) {
  ProjectionRunOptions options;
  if (llvm::Error err = seededRunOptions(options, "projection"))
    return err;
  options.noBias = noBias;
  return runProjection(op, options);
}

llvm::Error run(ModuleOp module) {
  std::optional<TileShape> tile;
  if (!tiled.empty()) {
    llvm::Expected<TileShape> parsed = parseTiled();
    if (!parsed)
      return parsed.takeError();
    tile = *parsed;
  }
  llvm::Expected<attn::KernelOp> kernel = selectKernel(module);
  if (!kernel)
    return kernel.takeError();
  if (auto linear = dyn_cast_or_null<attn::LinearAttentionOp>(kernel->getCompute().getOperation()))
    return runLinearKernel(linear);
  if (auto mha = dyn_cast_or_null<attn::MultiHeadAttentionOp>(kernel->getCompute().getOperation()))
    return runMultiHeadKernel(mha);
  if (auto projection = dyn_cast_or_null<attn::ProjectionOp>(kernel->getCompute().getOperation()))
    return runProjectionKernel(projection);
  attn::AttentionSpecOpInterface op = kernel->getSpec();
  ElementType type = *elementTypeOf(op.getDtype());
  llvm::Expected<Inputs> in = loadInputs(op, type);
  if (!in)
    return in.takeError();
  if (op.hasOutput(attn::OutputKind::dq))
    return runBackwardKernel(op, *in);
  if (!soFile.empty())
    return runCompiledMode(op, *in);
  if (tile)
    return runTiledReferenceMode(module, op, *in, *tile);
  return runReferenceMode(op, *in);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  attnc::showOnlyOptionsIn({&problemCat, &referenceCat, &compiledCat});
  cl::ParseCommandLineOptions(argc, argv, "attnc-run: run attention specs\n");
  if (threads < 0 || threads > kMaxThreads) {
    llvm::WithColor::error(llvm::errs(), "attnc-run")
        << "--num-threads must be in [0, " << kMaxThreads << "] (0: all cores), got " << threads
        << "\n";
    return 1;
  }
  // A timing of no runs has no median; --repeat 0 used to run once anyway.
  if (repeat < 1 || repeat > 100000) {
    llvm::WithColor::error(llvm::errs(), "attnc-run")
        << "--repeat must be in [1, 100000], got " << repeat << "\n";
    return 1;
  }
  if (callers < 1 || callers > kMaxThreads) {
    llvm::WithColor::error(llvm::errs(), "attnc-run")
        << "--callers must be in [1, " << kMaxThreads << "], got " << callers << "\n";
    return 1;
  }
  // A negative or NaN tolerance fails every element: a mistake, not a check.
  for (const cl::opt<double> *tol : {&relTol, &absTol})
    if (tol->getNumOccurrences() && !(*tol >= 0 && std::isfinite(*tol))) {
      llvm::WithColor::error(llvm::errs(), "attnc-run")
          << "--" << tol->ArgStr << " must be finite and non-negative, got " << *tol << "\n";
      return 1;
    }
  if (fmaPeak) {
    int n = threads ? int(threads) : std::max(1u, std::thread::hardware_concurrency());
    llvm::outs() << llvm::formatv("FMA peak: {0:f1} GFLOPS on {1} threads\n",
                                  measureFmaPeakGflops(n), n);
    return 0;
  }
  if (bf16Peak) {
    int n = threads ? int(threads) : std::max(1u, std::thread::hardware_concurrency());
    if (!hasBf16Dot()) {
      llvm::outs() << "bf16 dot peak: not available: this CPU has no AVX512-BF16 (vdpbf16ps)\n";
      return 1;
    }
    llvm::outs() << llvm::formatv("bf16 dot peak: {0:f1} GFLOPS on {1} threads\n",
                                  measureBf16DotPeakGflops(n), n);
    return 0;
  }
  if (tanhPeak) {
    int n = threads ? int(threads) : std::max(1u, std::thread::hardware_concurrency());
    double rate = measureTanhStepsPerSecond(n);
    if (rate == 0) {
      llvm::WithColor::error(llvm::errs(), "attnc-run")
          << "the tanh probe's tanh differs from libm's by more than 1e-6\n";
      return 1;
    }
    llvm::outs() << llvm::formatv("tanh peak: {0:f2} G steps/s on {1} threads\n", rate, n);
    return 0;
  }
  if (bandwidthPeak) {
    int n = threads ? int(threads) : std::max(1u, std::thread::hardware_concurrency());
    ReadBandwidth read = measureReadBandwidth(n);
    if (read.gigabytesPerSecond == 0) {
      llvm::WithColor::error(llvm::errs(), "attnc-run")
          << "cannot measure the read bandwidth: no " << (read.bytes >> 20)
          << " MiB buffer, or its sums were wrong\n";
      return 1;
    }
    llvm::outs() << llvm::formatv("read bandwidth: {0:f1} GB/s on {1} threads (best of 5 reads "
                                  "of {2} MiB; last-level cache {3})\n",
                                  read.gigabytesPerSecond, n, read.bytes >> 20,
                                  read.lastLevelCache
                                      ? llvm::formatv("{0} MiB", read.lastLevelCache >> 20).str()
                                      : std::string("unknown"));
    return 0;
  }
  if (specFile.empty()) {
    llvm::WithColor::error(llvm::errs(), "attnc-run") << "no SPEC given\n";
    return 2;
  }
  if (reference == !soFile.empty()) {
    llvm::WithColor::error(llvm::errs(), "attnc-run")
        << "give either --reference (evaluate the spec) or --so K.so (run a "
           "kernel built with attnc --emit=so)\n";
    return 2;
  }
  if (!tiled.empty() && !reference) {
    llvm::WithColor::error(llvm::errs(), "attnc-run")
        << "--tiled evaluates the tiled form with the reference evaluator; "
           "use it with --reference\n";
    return 2;
  }
  attnc::SpecFile spec;
  OwningOpRef<ModuleOp> module = spec.parse(specFile, "attnc-run");
  if (!module)
    return 1;
  if (llvm::Error err = run(*module)) {
    llvm::outs().flush(); // the report first, then the verdict
    llvm::WithColor::error(llvm::errs(), "attnc-run")
        << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  return 0;
}
