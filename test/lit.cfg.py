# attnc's lit suite. Features gate what a machine can run:
#   avx512  the CPU runs AVX-512F code (Halide smoke test, x86-64-avx512 kernels)
#   avx512bf16  AVX-512 with AVX512-BF16 (x86-64-avx512-bf16 kernels)
#   avx2    the CPU runs AVX2 + FMA code (x86-64-avx2 kernels)
#   ptxas   CMake found CUDA's ptxas
#   nvdisasm  CMake found CUDA's nvdisasm (PyPI's nvidia-cuda-nvdisasm)
#   opencl  an OpenCL ICD is installed (PoCL here: the Halide GPU schedule on the CPU)
#   cuda-stub  the CUDA toolkit's stub libcuda.so (lib64/stubs) is there
#   cuda-device  an NVIDIA driver is loaded (never on the CI machines)
import glob
import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "attnc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attnc_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["attnc", "attnc-opt", "attnc-run", "attnc-tune", "halide-smoke"], [config.attnc_tools_dir])
config.substitutions.append(("%attnc_src", config.attnc_src_root))
config.substitutions.append(("%attnc_obj", config.attnc_obj_root))
# A sanitizer build (ATTNC_SANITIZE=address,undefined, scripts/sanitize.sh): every attnc
# tool and the runtime are instrumented, and so is every kernel's shared object (it links
# the runtime), so the Python that loads kernels preloads the sanitizer runtime, without
# reporting the interpreter's own leaks (test/sanitize/lsan.supp) or passing the preload to
# children other than Python (test/sanitize/sitecustomize.py); CMake consumers build with
# the same compilers, which Attnc::runtime's link options need. use_sigaltstack=0:
# LLVM's crash handler installs its own alternate signal stack on the threads it runs on,
# which ASan would otherwise unmap as its own when such a thread ends. allow_user_poisoning=0:
# LLVM's BumpPtrAllocator poisons its slabs in attnc's (instrumented) inlined copies and not in
# the uninstrumented libMLIR, which then uses that memory: a false use-after-poison.
# Every Python script the tests run can import the Python package from the source tree
# (tools/python/attnc, which scripts/setup.sh also installs into the venv, editable).
python_path = [os.path.join(config.attnc_src_root, "tools", "python")]
python_env = []
if "address" in config.sanitize.split(","):
    config.environment.setdefault("ASAN_OPTIONS",
                                  "use_sigaltstack=0:allow_user_poisoning=0:detect_leaks=1")
    config.environment.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    config.environment["CC"] = config.c_compiler
    config.environment["CXX"] = config.cxx_compiler
    sanitize_dir = os.path.join(config.test_source_root, "sanitize")
    python_env = ["LD_PRELOAD=" + os.path.join(config.sanitizer_runtime_dir,
                                               "libclang_rt.asan-x86_64.so"),
                  "LSAN_OPTIONS=suppressions=" + os.path.join(sanitize_dir, "lsan.supp")]
    python_path.append(sanitize_dir)
config.substitutions.append(("%numpy_python", "env %s PYTHONPATH=%s %s" % (
    " ".join(python_env), ":".join(python_path), config.numpy_python)))


def venv_python():
    """The python of the venv that holds the build's CMake (scripts/setup.sh's venv)."""
    d = os.path.dirname(os.path.realpath(config.cmake))
    while d != os.path.dirname(d):
        if os.path.exists(os.path.join(d, "pyvenv.cfg")):
            return os.path.join(d, "bin", "python")
        d = os.path.dirname(d)
    return "false"  # no venv: the tests that need it fail, naming nothing they did not run


# The venv's python (ml_dtypes, Pillow) under the same environment as %numpy_python's.
config.substitutions.append(("%venv_python", "env %s PYTHONPATH=%s %s" % (
    " ".join(python_env), ":".join(python_path), venv_python())))

# PyTorch and JAX, where benchmarks/peers/install.sh made the benchmark venv (several GiB: not
# part of scripts/setup.sh): the Python package's checks on their tensors run there.
bench_venv = os.path.join(config.attnc_src_root, "benchmarks", ".venv")
for framework in ("torch", "jax"):
    if glob.glob(os.path.join(bench_venv, "lib", "python3*", "site-packages", framework,
                              "__init__.py")):
        config.available_features.add(framework)
        config.substitutions.append(("%%%s_python" % framework, "env PYTHONPATH=%s %s" % (
            python_path[0], os.path.join(bench_venv, "bin", "python"))))
config.substitutions.append(("%cc", config.c_compiler))
config.substitutions.append(("%cmake", config.cmake))


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


# ATTNC_LIT_CPU_FLAGS (space-separated /proc/cpuinfo flags) makes lit see a smaller CPU than
# this one, so that a machine with AVX-512 can check what an AVX2-only one runs: the gated
# steps' fallbacks (`%if avx512 %{ ... %} %else %{ ... %}`) and %host_target.
# The kernels' runtime is told the same (ATTNC_CPU_FEATURES: the multi-target dispatch picks
# what that CPU would), e.g. ATTNC_LIT_CPU_FLAGS="avx2 fma bmi2 f16c".
flags = cpu_flags()
if "ATTNC_LIT_CPU_FLAGS" in os.environ:
    flags = set(os.environ["ATTNC_LIT_CPU_FLAGS"].split()) & flags
    runtime_names = {"avx2", "fma", "bmi2", "f16c", "avx512f", "avx512bw", "avx512cd",
                     "avx512dq", "avx512vl", "avx512bf16"}  # lib/Runtime/CpuFeatures.cpp
    config.environment["ATTNC_CPU_FEATURES"] = ",".join(sorted(
        runtime_names & {f.replace("avx512_bf16", "avx512bf16") for f in flags})) or "none"
if "avx512f" in flags:
    config.available_features.add("avx512")
    if "avx512_bf16" in flags:
        config.available_features.add("avx512bf16")
if "avx2" in flags and "fma" in flags:
    config.available_features.add("avx2")
# %host_target: the widest x86-64 target this CPU runs, for tests that run what they build
# (attnc and attnc-tune default to x86-64-avx512, which an AVX2-only machine cannot run).
config.substitutions.append(("%host_target", "x86-64-avx512" if "avx512f" in flags else
                             "x86-64-avx2" if "avx2" in flags and "fma" in flags else "x86-64"))
if os.path.isdir("/etc/OpenCL/vendors") and any(
        f.endswith(".icd") for f in os.listdir("/etc/OpenCL/vendors")):
    config.available_features.add("opencl")
if os.path.exists("/proc/driver/nvidia"):
    config.available_features.add("cuda-device")
# AArch64 kernels run under user-mode QEMU, linked by Debian's cross toolchain.
if shutil.which("qemu-aarch64") and shutil.which("aarch64-linux-gnu-g++"):
    config.available_features.add("qemu-aarch64")
    config.substitutions.append(("%halide_include", config.halide_include))
    # cross_run.py builds the library QEMU preloads (test/numerics/qemu_vzeroupper.c) with it.
    config.environment["ATTNC_HOST_CC"] = config.c_compiler
if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))
    # NVIDIA's stub libcuda.so beside the toolkit: the driver's exported symbols, no driver.
    stubs = os.path.join(os.path.dirname(config.ptxas), "..", "lib64", "stubs")
    if os.path.exists(os.path.join(stubs, "libcuda.so")):
        config.available_features.add("cuda-stub")
        config.substitutions.append(("%cuda_stubs", os.path.realpath(stubs)))
if config.nvdisasm and os.path.exists(config.nvdisasm):
    config.available_features.add("nvdisasm")
    config.substitutions.append(("%nvdisasm", config.nvdisasm))
# The kernel cache (attnc --kernel-cache): scripts/test.sh sets ATTNC_KERNEL_CACHE, so that a
# kernel the unchanged compiler already built is not compiled again; empty or unset: off.
if os.environ.get("ATTNC_KERNEL_CACHE"):
    config.environment["ATTNC_KERNEL_CACHE"] = os.environ["ATTNC_KERNEL_CACHE"]
# What this machine runs, for test/not_run.py (the list scripts/test.sh ends with).
os.makedirs(config.test_exec_root, exist_ok=True)
with open(os.path.join(config.test_exec_root, "lit-features.txt"), "w") as f:
    f.write("\n".join(sorted(config.available_features)) + "\n")
