//===- CpuTarget.cpp - x86-64 targets and machine code emission -----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Targets are x86-64 micro-architecture levels, so an object runs on every
// CPU of its level: x86-64-v4 (AVX-512 F/BW/CD/DQ/VL) and x86-64-v3 (AVX2 +
// FMA). `host` takes this machine's CPU and features. Output is deterministic:
// the same module gives the same bytes.
//
//===----------------------------------------------------------------------===//

#include "attnc/Target/CPU/CpuTarget.h"

#include "attnc/Runtime/attnc_runtime.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace attnc;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::StringRef attnc::cpuTargetNames() {
  return "x86-64-avx512, x86-64-avx512-bf16, x86-64-avx2, x86-64, aarch64-neon, "
         "aarch64-sve256, aarch64-sve512, host";
}

/// The x86-64-v4 / v3 levels as LLVM's X86 target defines them.
static const char *const kAvx512Needs[] = {"avx512f", "avx512bw", "avx512cd",
                                           "avx512dq", "avx512vl"};
static const char *const kAvx2Needs[] = {"avx2", "fma", "bmi2", "f16c"};

/// The runtime's name for each attnc_cpu_feature bit is LLVM's feature name.
static const std::pair<const char *, uint64_t> kFeatureBits[] = {
    {"avx2", ATTNC_CPU_AVX2},         {"fma", ATTNC_CPU_FMA},
    {"bmi2", ATTNC_CPU_BMI2},         {"f16c", ATTNC_CPU_F16C},
    {"avx512f", ATTNC_CPU_AVX512F},   {"avx512bw", ATTNC_CPU_AVX512BW},
    {"avx512cd", ATTNC_CPU_AVX512CD}, {"avx512dq", ATTNC_CPU_AVX512DQ},
    {"avx512vl", ATTNC_CPU_AVX512VL}, {"avx512bf16", ATTNC_CPU_AVX512BF16}};

static uint64_t featureBits(llvm::ArrayRef<const char *> names) {
  uint64_t bits = 0;
  for (const char *name : names)
    for (auto [feature, bit] : kFeatureBits)
      if (llvm::StringRef(name) == feature)
        bits |= bit;
  return bits;
}

llvm::Expected<CpuTarget> attnc::lookupCpuTarget(llvm::StringRef name) {
  uint64_t v3 = featureBits(kAvx2Needs), v4 = v3 | featureBits(kAvx512Needs);
  if (name == "x86-64-avx512") {
    CpuTarget t{name.str(), "x86-64-v4", "", 16, 32, "x86-64-v4: AVX-512 F/BW/CD/DQ/VL"};
    t.cpuNeeds = v4;
    return t;
  }
  if (name == "x86-64-avx512-bf16") {
    CpuTarget t{name.str(), "x86-64-v4", "+avx512bf16", 16, 32,
                "x86-64-v4 and AVX512-BF16 (vdpbf16ps)"};
    t.bf16Dot = true;
    t.cpuNeeds = v4 | ATTNC_CPU_AVX512BF16;
    return t;
  }
  if (name == "x86-64-avx2") {
    CpuTarget t{name.str(), "x86-64-v3", "", 8, 16, "x86-64-v3: AVX2, FMA"};
    t.cpuNeeds = v3;
    return t;
  }
  // The baseline every x86-64 CPU runs: SSE2, 4 lanes, 16 xmm registers.
  if (name == "x86-64")
    return CpuTarget{name.str(), "x86-64", "", 4, 16, "any x86-64 CPU (SSE2)"};
  // ARMv8-A: Advanced SIMD (NEON) is part of every AArch64 CPU; 4 lanes, 32
  // vector registers. Cross-compiled here (objects, not shared objects).
  if (name == "aarch64-neon") {
    CpuTarget t{name.str(), "generic", "+neon", 4, 32, "any AArch64 CPU (NEON)"};
    t.triple = "aarch64-unknown-linux-gnu";
    return t;
  }
  // SVE at a fixed length: vectors of 8 or 16 f32 lanes; the code runs on
  // CPUs whose SVE vectors are at least that long (checked at launch).
  if (name == "aarch64-sve256" || name == "aarch64-sve512") {
    bool wide = name.ends_with("512");
    CpuTarget t{name.str(), "generic", "+neon,+sve", wide ? 16 : 8, 32,
                wide ? "AArch64 with SVE vectors of 512 bits or more"
                     : "AArch64 with SVE vectors of 256 bits or more"};
    t.triple = "aarch64-unknown-linux-gnu";
    t.sveVectorBits = wide ? 512 : 256;
    t.cpuNeeds = wide ? ATTNC_CPU_SVE256 | ATTNC_CPU_SVE512 : ATTNC_CPU_SVE256;
    return t;
  }
  if (name == "host") {
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    std::string list;
    for (auto &f : features)
      list += (list.empty() ? "" : ",") + std::string(f.second ? "+" : "-") +
              f.first().str();
    bool avx512 = features.lookup("avx512f");
    int64_t width = avx512 ? 16 : features.lookup("avx2") ? 8 : 4;
    CpuTarget t{"host", llvm::sys::getHostCPUName().str(), list, width,
                avx512 ? 32 : 16, "this machine's CPU"};
    t.bf16Dot = avx512 && features.lookup("avx512bf16");
    for (auto [feature, bit] : kFeatureBits)
      if (features.lookup(feature))
        t.cpuNeeds |= bit;
    return t;
  }
  return error("unknown target '" + name + "'; expected one of " + cpuTargetNames());
}

bool CpuTarget::runsHere() const {
  if (llvm::Triple(triple).getArch() != llvm::Triple(llvm::sys::getProcessTriple()).getArch())
    return false;
  llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
  auto all = [&](llvm::ArrayRef<const char *> names) {
    return llvm::all_of(names, [&](const char *f) { return host.lookup(f); });
  };
  if (cpu == "x86-64-v4")
    return all(kAvx512Needs) && all(kAvx2Needs) && (!bf16Dot || host.lookup("avx512bf16"));
  if (cpu == "x86-64-v3")
    return all(kAvx2Needs);
  return true; // host
}

static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const CpuTarget &target) {
  // x86-64 and AArch64: the targets attnc generates code for.
  static bool initialized = [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
    return true;
  }();
  (void)initialized;
  llvm::Triple triple(target.triple);
  std::string message;
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(triple, message);
  if (!t)
    return error("no LLVM target for " + target.triple + ": " + message);
  llvm::TargetOptions options;
  // Kernels are built for speed; the online softmax is written so that
  // reassociation and contraction keep its error within the test tolerances.
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  std::unique_ptr<llvm::TargetMachine> tm(t->createTargetMachine(
      triple, target.cpu, target.features, options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!tm)
    return error("cannot create a target machine for " + target.cpu);
  return tm;
}

llvm::Expected<std::unique_ptr<llvm::Module>>
attnc::translateAndOptimize(mlir::ModuleOp module, const CpuTarget &target,
                            llvm::LLVMContext &context) {
  mlir::DialectRegistry registry;
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  module->getContext()->appendDialectRegistry(registry);
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context, "attnc");
  if (!llvmModule)
    return error("translation to LLVM IR failed");
  auto tm = createTargetMachine(target);
  if (!tm)
    return tm.takeError();
  llvmModule->setTargetTriple(llvm::Triple(target.triple));
  // Fixed-length SVE: LLVM lowers the kernels' fixed-size vectors to SVE
  // registers when a function promises at least that vector length.
  if (target.sveVectorBits)
    for (llvm::Function &f : *llvmModule)
      if (!f.isDeclaration())
        f.addFnAttr(llvm::Attribute::getWithVScaleRangeArgs(
            context, target.sveVectorBits / 128, 16));
  llvmModule->setDataLayout((*tm)->createDataLayout());

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm->get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(*llvmModule, mam);
  return llvmModule;
}

llvm::Error attnc::emitMachineCode(llvm::Module &module, const CpuTarget &target,
                                   bool assembly, llvm::raw_pwrite_stream &os) {
  auto tm = createTargetMachine(target);
  if (!tm)
    return tm.takeError();
  llvm::legacy::PassManager pm;
  if ((*tm)->addPassesToEmitFile(pm, os, nullptr,
                                 assembly ? llvm::CodeGenFileType::AssemblyFile
                                          : llvm::CodeGenFileType::ObjectFile))
    return error("the target cannot emit this file type");
  pm.run(module);
  return llvm::Error::success();
}
