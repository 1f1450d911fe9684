//===- KernelCache.cpp - attnc's content-addressed kernel cache -----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An entry is DIR/<first two hex digits of the key>/<key>.<o|so|ptx>, written
// to a unique temporary file in its directory and renamed into place, so the
// many attnc processes a lit run starts never see a partial entry. A hit
// touches the entry's time stamp: a pruner can drop what was not used for long.
// Nothing in here ever fails a compile: a cache that cannot be read or written
// is only not used.
//
//===----------------------------------------------------------------------===//

#include "KernelCache.h"

#include "attnc/BuildId.h"
#include "attnc/Target/CUDA/CudaTarget.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <chrono>

using namespace attnc;
namespace fs = llvm::sys::fs;

namespace {

/// The format of the key and of the entries; a new one when either changes,
/// so that no attnc ever reads an entry written under other rules.
constexpr llvm::StringLiteral kFormat = "attnc-kernel-cache-1";

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// SHA-256 over length-prefixed parts, so that ("ab", "c") and ("a", "bc")
/// hash apart.
class KeyHasher {
public:
  void add(llvm::StringRef part) {
    uint8_t size[8];
    for (int i = 0; i < 8; ++i)
      size[i] = uint8_t(uint64_t(part.size()) >> (8 * i));
    sha.update(size);
    sha.update(part);
  }
  std::string hex() { return llvm::toHex(sha.final(), /*LowerCase=*/true); }

private:
  llvm::SHA256 sha;
};

/// This machine's CPU and its features, sorted.
std::string hostCpu() {
  std::vector<std::string> features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    if (feature.second)
      features.push_back(feature.first().str());
  llvm::sort(features);
  return llvm::sys::getHostCPUName().str() + ":" + llvm::join(features, ",");
}

/// Whether `token` is an option left out of the key: -o (the same kernel
/// written to another file is the same entry), --kernel-cache (where the
/// cache is does not change what is in it) and --jobs (the object is the same
/// however many threads compiled it); `takesNext` when its value is the
/// next token. LLVM's parser takes -o FILE, -o=FILE, --o FILE and --o=FILE;
/// it refuses -oFILE, which is therefore kept as it is: dropping every token
/// that starts with -o would drop -opt-bisect-limit=N too.
bool isOmittedOption(llvm::StringRef token, bool &takesNext) {
  llvm::StringRef name = token;
  if (!name.consume_front("--") && !name.consume_front("-"))
    return false;
  llvm::StringRef option = name.split('=').first;
  if (option != "o" && option != "kernel-cache" && option != "jobs")
    return false;
  takesNext = !name.contains('=');
  return true;
}

/// The SHA-256 of the contents of the file at `path`.
llvm::Expected<std::string> fileHash(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return error("cannot read " + path + ": " + buffer.getError().message());
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef((*buffer)->getBuffer())),
                     /*LowerCase=*/true);
}

/// Adds one argument: its text, or where it names a regular file (the spec;
/// the value of --tuning-db=DB) the file's contents instead, so that the same
/// spec at another path gives the same key and an edited one another.
llvm::Error addArgument(KeyHasher &key, llvm::StringRef token) {
  llvm::StringRef option, path = token;
  if (!fs::is_regular_file(path) && token.contains('='))
    std::tie(option, path) = token.split('=');
  if (path.empty() || !fs::is_regular_file(path)) {
    key.add("argument");
    key.add(token);
    return llvm::Error::success();
  }
  llvm::Expected<std::string> hash = fileHash(path);
  if (!hash)
    return hash.takeError();
  key.add("file");
  key.add(option);
  key.add(*hash);
  return llvm::Error::success();
}

/// Copies `from` over `to` through a unique temporary file next to `to`,
/// renamed over it: no reader of `to` sees it half written, and a process
/// that has the old `to` open or mapped keeps it intact.
llvm::Error copyAtomically(llvm::StringRef from, llvm::StringRef to, fs::perms permissions) {
  int fd;
  llvm::SmallString<256> temporary;
  if (std::error_code ec = fs::createUniqueFile(to + ".tmp-%%%%%%%%", fd, temporary))
    return error("cannot create a temporary file next to " + to + ": " + ec.message());
  std::error_code ec = fs::copy_file(from, fd);
  fs::file_t file = fs::convertFDToNativeFile(fd);
  if (std::error_code closed = fs::closeFile(file); !ec)
    ec = closed; // a write that failed late (a full disk) shows at close
  if (!ec)
    ec = fs::setPermissions(temporary, permissions);
  if (!ec)
    ec = fs::rename(temporary, to);
  if (!ec)
    return llvm::Error::success();
  fs::remove(temporary);
  return error("cannot copy " + from + " to " + to + ": " + ec.message());
}

/// The status of a regular file at `path` without following a link; none if
/// there is nothing there (or the directory above it is a file).
llvm::Expected<std::optional<fs::file_status>> regularFileStatus(llvm::StringRef path) {
  fs::file_status status;
  std::error_code ec = fs::status(path, status, /*Follow=*/false);
  if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory)
    return std::nullopt;
  if (ec)
    return error("cannot read " + path + ": " + ec.message());
  if (status.type() != fs::file_type::regular_file)
    return error(path + " is not a regular file");
  return status;
}

/// Stores the output file `path` as the cache entry `entry`.
llvm::Error store(llvm::StringRef path, llvm::StringRef entry) {
  fs::file_status output;
  if (std::error_code ec = fs::status(path, output))
    return error("cannot read the output " + path + ": " + ec.message());
  llvm::StringRef directory = llvm::sys::path::parent_path(entry);
  if (std::error_code ec = fs::create_directories(directory))
    return error("cannot create " + directory + ": " + ec.message());
  return copyAtomically(path, entry, output.permissions());
}

/// Sets the entry's modification time to now (its last use), as far as it can.
void touch(llvm::StringRef entry) {
  int fd;
  if (fs::openFileForWrite(entry, fd, fs::CD_OpenExisting, fs::OF_Append))
    return;
  (void)fs::setLastAccessAndModificationTime(fd, std::chrono::system_clock::now());
  fs::file_t file = fs::convertFDToNativeFile(fd);
  (void)fs::closeFile(file);
}

} // namespace

llvm::StringRef attnc::kernelCacheBuildId() { return ATTNC_BUILD_ID; }

llvm::Expected<std::string> attnc::kernelCacheKey(llvm::ArrayRef<std::string> args,
                                                 llvm::ArrayRef<KernelCacheInput> inputs) {
  KeyHasher key;
  // The rules the key and the entries follow.
  key.add(kFormat);
  // The compiler: its sources and toolchain decide what a command line
  // generates.
  key.add(kernelCacheBuildId());
  // The CUDA toolkit the cuda-* targets assemble and link with (ptxas,
  // libdevice), which CUDA_HOME, CUDA_ROOT or CUDA_PATH choose at run time.
  key.add(cudaToolkitPath());
  // This machine's CPU: --target=host compiles for it, and --tuning-db prefers
  // the entries measured on it. (A cache shared between machines with
  // different CPUs is kept apart by this; on one machine it changes nothing.)
  key.add(hostCpu());
  // What the compile reads besides its command line, such as the Halide
  // runtime next to attnc (a copy of attnc without it makes objects that
  // carry their own), by contents.
  for (const KernelCacheInput &input : inputs) {
    key.add("input");
    key.add(input.what);
    if (input.path.empty()) {
      key.add("none");
      continue;
    }
    llvm::Expected<std::string> hash = fileHash(input.path);
    if (!hash)
      return hash.takeError();
    key.add(*hash);
  }
  // The command line, in order (options take effect in it), less the output
  // and the cache options (isOmittedOption), files by their contents.
  bool positional = false; // after `--`, every token is a positional argument
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef token = args[i];
    bool takesNext = false;
    if (!positional && isOmittedOption(token, takesNext)) {
      i += takesNext;
      continue;
    }
    positional |= token == "--";
    // LLVM's parser expands @FILE into that file's arguments, whose own files
    // the key would not see.
    if (token.starts_with("@"))
      return error("a response file on the command line (" + token + ")");
    if (llvm::Error err = addArgument(key, token))
      return std::move(err);
  }
  return key.hex();
}

KernelCache::KernelCache(std::string dir, llvm::ArrayRef<const char *> args, bool verbose)
    : dir(std::move(dir)), args(args.begin(), args.end()), verbose(verbose) {}

void KernelCache::addInput(llvm::StringRef what, llvm::StringRef path) {
  inputs.push_back({what.str(), path.str()});
  key.clear(); // keyed again with it
}

void KernelCache::note(const llvm::Twine &line) {
  noted = true;
  if (verbose)
    llvm::errs() << "attnc: kernel cache: " << line << "\n";
}

void KernelCache::finish() {
  if (enabled() && !noted)
    note("not used: no --emit=obj, so or ptx file was written");
}

llvm::Error KernelCache::produce(llvm::StringRef path, llvm::StringRef ext,
                                 llvm::function_ref<llvm::Error()> compile) {
  if (!enabled())
    return compile();
  if (path == "-") {
    note("not used: the output is stdout");
    return compile();
  }
  // A device (-o /dev/null), a link or a directory is left to the compile.
  llvm::Expected<std::optional<fs::file_status>> output = regularFileStatus(path);
  if (!output) {
    note("not used: " + llvm::toString(output.takeError()));
    return compile();
  }
  if (key.empty()) {
    llvm::Expected<std::string> computed = kernelCacheKey(args, inputs);
    if (!computed) {
      note("not used: " + llvm::toString(computed.takeError()));
      return compile();
    }
    key = std::move(*computed);
  }
  llvm::SmallString<256> entry(dir);
  llvm::sys::path::append(entry, llvm::StringRef(key).take_front(2), key + "." + ext);

  // An entry that is not a non-empty regular file (a directory, a file
  // truncated by hand) is compiled again, and the store replaces it if it can.
  llvm::Expected<std::optional<fs::file_status>> found = regularFileStatus(entry);
  if (found && *found && (*found)->getSize() > 0) {
    if (llvm::Error err = copyAtomically(entry, path, (*found)->permissions())) {
      llvm::consumeError(std::move(err)); // the compile will say what is wrong with `path`
    } else {
      touch(entry);
      note("hit " + llvm::StringRef(key).take_front(12));
      return llvm::Error::success();
    }
  }
  if (!found)
    llvm::consumeError(found.takeError());
  return compileAndStore(path, entry, compile);
}

llvm::Error KernelCache::compileAndStore(llvm::StringRef path, llvm::StringRef entry,
                                         llvm::function_ref<llvm::Error()> compile) {
  // A compile that printed a warning or a note must print it again the next
  // time: only a silent one is stored.
  uint64_t errs = llvm::errs().tell(), outs = llvm::outs().tell();
  if (llvm::Error err = compile()) {
    note("miss, not stored (the compile failed)");
    return err;
  }
  if (llvm::errs().tell() != errs || llvm::outs().tell() != outs) {
    note("miss, not stored (the compile printed diagnostics)");
    return llvm::Error::success();
  }
  if (llvm::Error err = store(path, entry)) {
    note("not used: " + llvm::toString(std::move(err)));
    return llvm::Error::success();
  }
  note("miss, stored " + llvm::StringRef(key).take_front(12));
  return llvm::Error::success();
}
