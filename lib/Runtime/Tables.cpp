//===- Tables.cpp - Resolves and checks a descriptor's tables -------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Tables.h"

#include "Describe.h"

#include <algorithm>
#include <cstring>
#include <iterator>

using namespace attnc::rt;

namespace {

constexpr DLDataType kKernelDtypes[] = {{kDLFloat, 32, 1}, {kDLFloat, 16, 1}, {kDLBfloat, 16, 1}};

bool isKernelDtype(int32_t code, int32_t bits) {
  for (DLDataType dt : kKernelDtypes)
    if (code == dt.code && bits == dt.bits)
      return true;
  return false;
}

/// Lengths and indices (a bound tensor's entries).
constexpr DLDataType kIndexDtype = {kDLInt, 32, 1};

/// "float32 (kDLFloat = 2, 32 bits), ... and bfloat16 (kDLBfloat = 4, 16
/// bits)", from the one list of kernel dtypes.
std::string kernelDtypeList() {
  std::string list;
  size_t n = std::size(kKernelDtypes);
  for (size_t i = 0; i < n; ++i)
    list += cat(i == 0 ? "" : i + 1 < n ? ", " : " and ", dtypeName(kKernelDtypes[i]), " (",
                dtypeCodeName(kKernelDtypes[i].code), " = ", int(kKernelDtypes[i].code), ", ",
                unsigned(kKernelDtypes[i].bits), " bits)");
  return list;
}

int findSymbol(const attnc_kernel_desc &d, const char *name, size_t length) {
  for (int i = 0; i < d.num_symbols; ++i)
    if (std::strlen(d.symbols[i].name) == length &&
        std::strncmp(d.symbols[i].name, name, length) == 0)
      return i;
  return -1;
}

/// What a list is, for its error messages ("tensor " q "'s dims"): put
/// together only when a check fails, not on every launch.
struct ListName {
  const char *before, *name, *after;
};
std::ostream &operator<<(std::ostream &os, const ListName &n) {
  return os << n.before << n.name << n.after;
}

/// A decimal number of 1 or 2 digits from `p` to `end`, in 1..`most`, or -1.
int parseSmall(const char *p, const char *end, int most) {
  if (end - p < 1 || end - p > 2)
    return -1;
  int n = 0;
  for (; p < end; ++p) {
    if (*p < '0' || *p > '9')
      return -1;
    n = n * 10 + (*p - '0');
  }
  return n >= 1 && n <= most ? n : -1;
}

/// A dim, "[S*]symbol[+N|-N]", from `p` to `end` into `t`; false if it is not one.
bool parseDim(const attnc_kernel_desc &d, const char *p, const char *end, Term &t) {
  if (const char *star = static_cast<const char *>(std::memchr(p, '*', size_t(end - p)))) {
    if ((t.scale = parseSmall(p, star, kMaxScale)) < 0)
      return false;
    p = star + 1;
  }
  const char *sign = std::find_if(p, end, [](char c) { return c == '+' || c == '-'; });
  t.symbol = findSymbol(d, p, size_t(sign - p));
  if (sign == end)
    return t.symbol >= 0;
  int n = parseSmall(sign + 1, end, kMaxPlus);
  t.plus = *sign == '-' ? -n : n;
  return t.symbol >= 0 && n > 0;
}

/// Parses `list` ("a,b,c", with `divisions` also "a/b", else also "a+N")
/// into `terms`.
std::string parseList(const attnc_kernel_desc &d, const char *list, bool divisions,
                      Term *terms, int &count, const ListName &what) {
  count = 0;
  if (!list || !*list)
    return cat(what, " is empty");
  for (const char *p = list;; ++p) {
    const char *end = std::strchr(p, ',');
    if (!end)
      end = p + std::strlen(p);
    if (count == kMaxRank)
      return cat(what, " \"", list, "\" has more than ", kMaxRank, " entries");
    Term &t = terms[count++];
    t = Term();
    bool ok;
    if (divisions) {
      const char *op = static_cast<const char *>(std::memchr(p, '/', size_t(end - p)));
      t.symbol = findSymbol(d, p, size_t((op ? op : end) - p));
      ok = t.symbol >= 0 && (!op || (t.divisor = findSymbol(d, op + 1, size_t(end - op - 1))) >= 0);
    } else {
      ok = parseDim(d, p, end, t);
    }
    if (!ok)
      return cat(what, " \"", list, "\" names ", std::string(p, end),
                 ", which is not a symbol of the kernel",
                 divisions ? "" : cat(" (or S*symbol+N or -N, S and N in 1 to ", kMaxPlus, ")"));
    if (!*end)
      return "";
    p = end;
  }
}

std::string checkCounts(const attnc_kernel_desc &d) {
  if (d.reserved != 0)
    return cat("reserved = ", d.reserved, " must be 0");
  auto within = [](int32_t n, int lo, int hi) { return n >= lo && n <= hi; };
  if (!within(d.num_symbols, 0, kMaxSymbols) || !within(d.num_tensors, 1, kMaxTensors) ||
      !within(d.num_phases, 1, kMaxPhases) || !within(d.num_args, 1, kMaxArgs) ||
      !within(d.num_params, 0, kMaxParams))
    return cat("num_symbols = ", d.num_symbols, ", num_tensors = ", d.num_tensors,
               ", num_phases = ", d.num_phases, ", num_args = ", d.num_args,
               " and num_params = ", d.num_params, " must lie in [0, ", kMaxSymbols,
               "], [1, ", kMaxTensors, "], [1, ", kMaxPhases, "], [1, ", kMaxArgs, "] and [0, ",
               kMaxParams, "]");
  if ((d.num_symbols && !d.symbols) || !d.tensors || !d.phases)
    return "its symbol, tensor or phase table is NULL";
  for (int i = 0; i < d.num_symbols; ++i) {
    const attnc_symbol_desc &s = d.symbols[i];
    if (!s.name || !*s.name || std::strpbrk(s.name, ",/"))
      return cat("symbol ", i, " has no name, or one with ',' or '/'");
    if (findSymbol(d, s.name, std::strlen(s.name)) != i)
      return cat("two symbols are named ", s.name);
    if (s.param >= d.num_params)
      return cat("symbol ", s.name, " goes to params[", s.param, "], beyond num_params = ",
                 d.num_params);
  }
  return "";
}

/// Item phases run on this runtime's host threads; device phases take host
/// or CUDA tensors.
std::string checkPhases(const attnc_kernel_desc &d, Tables &tables) {
  for (int i = 0; i < d.num_phases; ++i) {
    const attnc_phase_desc &ph = d.phases[i];
    if (!ph.name || !ph.index)
      return cat("phase ", i, " has no name or index names");
    if (!ph.item == !ph.device)
      return cat("phase '", ph.name, "' must have one of an item function and a device function");
    if (d.device_type != kDLCPU && !(ph.device && d.device_type == kDLCUDA))
      return cat("device_type = ", deviceName(d.device_type), " (", d.device_type,
                 "), but this runtime only launches kDLCPU (", int(kDLCPU),
                 ") kernels, and device phases on kDLCUDA (", int(kDLCUDA), ")");
    std::string bad = parseList(d, ph.items, true, tables.phaseItems[i], tables.phaseRank[i],
                                {"the items of phase '", ph.name, "'"});
    if (!bad.empty())
      return bad;
    for (int c = 0; c < tables.phaseRank[i]; ++c) {
      int by = tables.phaseItems[i][c].divisor;
      if (by >= 0 && d.symbols[by].value < 1)
        return cat(d.symbols[by].name, " = ", d.symbols[by].value,
                   " must be fixed and >= 1: it divides ",
                   d.symbols[tables.phaseItems[i][c].symbol].name, " into the work items of phase '",
                   ph.name, "'");
    }
  }
  return "";
}

/// The earlier offsets tensor (one whose bound has steps) named `name`, or -1.
int findOffsets(const attnc_kernel_desc &d, const Tables &tables, int before, const char *name) {
  for (int j = 0; j < before; ++j)
    if (tables.tensors[j].stepSymbol >= 0 && std::strcmp(d.tensors[j].name, name) == 0)
      return j;
  return -1;
}

/// The clause that ends a bound at `p` into `shape`: ";steps<=S" (offsets)
/// or ";each<=steps(T)" (entry b within step b of offsets tensor T).
std::string parseSteps(const attnc_kernel_desc &d, const attnc_tensor_desc &t, const char *p,
                       const Tables &tables, int i, TensorShape &shape) {
  constexpr const char kSteps[] = ";steps<=", kEach[] = ";each<=steps(";
  size_t n = sizeof(kSteps) - 1, e = sizeof(kEach) - 1, len = std::strlen(p);
  if (std::strncmp(p, kSteps, n) == 0 &&
      (shape.stepSymbol = findSymbol(d, p + n, std::strlen(p + n))) >= 0)
    return "";
  if (std::strncmp(p, kEach, e) == 0 && len > e + 1 && p[len - 1] == ')') {
    std::string name(p + e, len - e - 1);
    if ((shape.withinSteps = findOffsets(d, tables, i, name.c_str())) >= 0)
      return "";
  }
  return cat("tensor ", t.name, "'s bound \"", t.bound, "\" ends in \"", p,
             "\", not \";steps<=S\" with S a symbol of the kernel or \";each<=steps(T)\" with "
             "T an earlier offsets tensor");
}

/// `bound` ("<S" or "<=S", S = "a*b*...", then optionally ";steps<=T") into
/// `shape`: only on int32 inputs, which only a bound may have.
std::string parseBound(const attnc_kernel_desc &d, const attnc_tensor_desc &t,
                       const Tables &tables, int i, TensorShape &shape) {
  bool index = t.dtype_code == kIndexDtype.code && t.dtype_bits == kIndexDtype.bits;
  shape.numBound = 0;
  shape.stepSymbol = -1;
  shape.withinSteps = -1;
  if (!t.bound)
    return index ? cat("int32 tensor ", t.name, " has no bound: its entries would go unchecked")
                 : "";
  if (!index || (t.flags & (ATTNC_TENSOR_OUTPUT | ATTNC_TENSOR_SCRATCH)))
    return cat("tensor ", t.name, " has a bound but is not an int32 input");
  if (std::strcmp(t.bound, "any") == 0) // data, not indices: the kernel checks its loads
    return "";
  const char *p = t.bound;
  if (*p++ != '<')
    return cat("tensor ", t.name, "'s bound \"", t.bound, "\" does not start with < or <=");
  shape.boundInclusive = *p == '=';
  p += shape.boundInclusive;
  for (;;) {
    const char *end = p + std::strcspn(p, "*;");
    int sym = findSymbol(d, p, size_t(end - p));
    if (sym < 0 || shape.numBound == kMaxRank)
      return cat("tensor ", t.name, "'s bound \"", t.bound, "\" names ", std::string(p, end),
                 ", which is not a symbol of the kernel (or has too many)");
    shape.boundSymbols[shape.numBound++] = sym;
    if (!*end)
      return "";
    if (*end == ';')
      return parseSteps(d, t, end, tables, i, shape);
    p = end + 1;
  }
}

std::string checkTensor(const attnc_kernel_desc &d, int i, Tables &tables, bool *argSeen) {
  const attnc_tensor_desc &t = d.tensors[i];
  TensorShape &shape = tables.tensors[i];
  if (!t.name || !t.dims || !t.legend || !t.strides)
    return cat("tensor ", i, " lacks a name, dims, legend or strides");
  constexpr int32_t kFlags = ATTNC_TENSOR_OUTPUT | ATTNC_TENSOR_UNIT_INNER |
                             ATTNC_TENSOR_SCRATCH | ATTNC_TENSOR_OPTIONAL;
  if ((t.flags & ~kFlags) ||
      ((t.flags & ATTNC_TENSOR_OPTIONAL) &&
       (t.flags & (ATTNC_TENSOR_OUTPUT | ATTNC_TENSOR_SCRATCH))))
    return cat("tensor ", t.name, " has flags ", t.flags,
               ": unknown bits, or optional on an output or scratch tensor");
  if (isScratch(t)) {
    if (t.arg < d.num_args || t.arg >= kMaxArgs || argSeen[t.arg] ||
        (t.flags & ATTNC_TENSOR_OUTPUT) ||
        (d.device_type != kDLCPU && d.device_type != kDLCUDA))
      return cat("scratch tensor ", t.name, " is view ", t.arg, ", not a free one in [",
                 d.num_args, ", ", kMaxArgs, ") after the arguments, or is flagged an output, "
                 "or belongs to a kernel neither on kDLCPU nor on kDLCUDA");
  } else if (t.arg < 0 || t.arg >= d.num_args || argSeen[t.arg]) {
    return cat("tensor ", t.name, " is argument ", t.arg, ", not a free one of the ",
               d.num_args, " arguments");
  }
  argSeen[t.arg] = true;
  tables.numViews = std::max(tables.numViews, t.arg + 1);
  bool index = t.dtype_code == kIndexDtype.code && t.dtype_bits == kIndexDtype.bits;
  if (!isKernelDtype(t.dtype_code, t.dtype_bits) && !index)
    return cat("tensor ", t.name, " has dtype_code = ", t.dtype_code, " and dtype_bits = ",
               t.dtype_bits, ", but this runtime only runs ", kernelDtypeList(),
               " tensors, and int32 lengths and indices");
  if (std::string bad = parseBound(d, t, tables, i, shape); !bad.empty())
    return bad;
  Term dims[kMaxRank], strides[kMaxRank];
  std::string bad = parseList(d, t.dims, false, dims, shape.rank, {"tensor ", t.name, "'s dims"});
  if (bad.empty())
    bad = parseList(d, t.strides, false, strides, shape.numStrides,
                    {"tensor ", t.name, "'s strides"});
  if (!bad.empty())
    return bad;
  for (int n = 0; n < shape.rank; ++n) {
    shape.dims[n] = dims[n].symbol;
    shape.dimsPlus[n] = dims[n].plus;
    shape.dimsScale[n] = dims[n].scale;
    if (tables.bySteps[dims[n].symbol] && (shape.numBound || shape.stepSymbol >= 0))
      return cat("tensor ", t.name, " has dim ", d.symbols[dims[n].symbol].name,
                 ", which the steps of an earlier tensor bind, and a bound on its entries");
    shape.afterSteps |= tables.bySteps[dims[n].symbol];
  }
  if (shape.stepSymbol >= 0 && shape.rank != 1)
    return cat("tensor ", t.name, "'s bound has steps, which only a 1-d tensor (offsets) may");
  if (shape.withinSteps >= 0 && (shape.rank != 1 || tables.tensors[shape.withinSteps].rank != 1 ||
                                 d.tensors[shape.withinSteps].dims != std::string(t.dims) + "+1"))
    return cat("tensor ", t.name, "'s bound \"each<=steps(", d.tensors[shape.withinSteps].name,
               ")\" needs it 1-d with one entry fewer than those offsets");
  bool taken[kMaxRank] = {};
  for (int s = 0; s < shape.numStrides; ++s) {
    // The first dim of that symbol not taken yet: [seq_q, seq_q] passes both.
    int at = -1;
    for (int n = 0; n < shape.rank && at < 0; ++n)
      at = dims[n].symbol == strides[s].symbol && !taken[n] ? n : -1;
    if (at >= 0)
      taken[at] = true;
    if (at < 0)
      return cat("tensor ", t.name, "'s strides name ", d.symbols[strides[s].symbol].name,
                 ", which is not one of its dims");
    shape.strideDims[s] = at;
  }
  if (t.stride_param < 0 || t.stride_param + shape.numStrides > d.num_params)
    return cat("tensor ", t.name, "'s strides go to params[", t.stride_param, "..], beyond "
               "num_params = ", d.num_params);
  if (t.fill != ATTNC_FILL_ZERO && t.fill != ATTNC_FILL_NEG_INF)
    return cat("tensor ", t.name, " has fill = ", t.fill);
  for (int j = 0; j < i && shape.sameAs < 0; ++j)
    if (std::strcmp(d.tensors[j].dims, t.dims) == 0)
      shape.sameAs = j;
  for (int n = 0; n < shape.rank; ++n) {
    int sym = shape.dims[n];
    if (d.symbols[sym].value >= 0 || tables.boundBy[sym] >= 0)
      continue;
    if (dims[n].derived())
      return cat("tensor ", t.name, "'s dim ", n, " scales or lowers ", d.symbols[sym].name,
                 ", which no tensor before it binds");
    // A scratch tensor's size comes from the arguments', never the reverse.
    if (isScratch(t))
      return cat("scratch tensor ", t.name, " has dim ", d.symbols[sym].name,
                 ", which no argument before it binds");
    tables.boundBy[sym] = i;
  }
  int step = shape.stepSymbol;
  if (step >= 0 && d.symbols[step].value < 0 && tables.boundBy[step] < 0) {
    tables.boundBy[step] = i;
    tables.bySteps[step] = true;
  }
  return "";
}

} // namespace

std::string attnc::rt::checkTables(const attnc_kernel_desc &d, Tables &tables) {
  std::string bad = checkCounts(d);
  if (bad.empty())
    bad = checkPhases(d, tables);
  if (!bad.empty())
    return bad;
  for (int s = 0; s < d.num_symbols; ++s) {
    tables.boundBy[s] = -1;
    tables.bySteps[s] = false;
  }
  bool argSeen[kMaxArgs] = {};
  tables.numViews = d.num_args;
  for (int i = 0; i < d.num_tensors; ++i)
    if (std::string bad = checkTensor(d, i, tables, argSeen); !bad.empty())
      return bad;
  for (int s = 0; s < d.num_symbols; ++s)
    if (d.symbols[s].value < 0 && tables.boundBy[s] < 0)
      return cat("symbol ", d.symbols[s].name, " is neither fixed nor a dimension of a tensor");
  return "";
}

const char *attnc::rt::kernelName(const attnc_kernel_desc &desc) {
  return desc.name ? desc.name : "(unnamed)";
}

DLDataType attnc::rt::tensorDtype(const attnc_tensor_desc &t) {
  // Only called once checkTables accepted the dtype, so the casts are exact.
  return {static_cast<uint8_t>(t.dtype_code), static_cast<uint8_t>(t.dtype_bits), 1};
}

std::string attnc::rt::indexName(const attnc_phase_desc &phase, int i) {
  const char *p = phase.index;
  for (int n = 0; n < i && p; ++n) {
    p = std::strchr(p, ',');
    p = p ? p + 1 : nullptr;
  }
  if (!p)
    return cat("i", i);
  const char *end = std::strchr(p, ',');
  return end ? std::string(p, end) : std::string(p);
}
