//===- Tunables.cpp - a backend's schedule parameters ---------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Target/Tunables.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace attnc;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static std::string names(llvm::ArrayRef<Tunable> tunables) {
  std::string list;
  for (const Tunable &t : tunables)
    list += (list.empty() ? "" : ", ") + t.name.str();
  return list;
}

const Tunable *Schedule::find(llvm::StringRef name) const {
  return llvm::find_if(tunables, [&](const Tunable &x) { return x.name == name; });
}

llvm::Error Schedule::set(llvm::StringRef assignment, int64_t vectorWidth) {
  auto [name, text] = assignment.split('=');
  name = name.trim();
  text = text.trim();
  const Tunable *t = find(name);
  if (t == tunables.end())
    return error("unknown tunable '" + name + "' in --schedule " + assignment +
                 "; this backend has " + names(tunables));
  if (!t->choices.empty()) {
    const llvm::StringRef *choice = llvm::find(t->choices, text);
    if (choice == t->choices.end())
      return error("--schedule " + assignment + ": " + name + " is one of " +
                   llvm::join(t->choices, ", "));
    values[name] = choice - t->choices.begin();
    return llvm::Error::success();
  }
  int64_t value;
  if (text == "auto" && !t->automatic.empty())
    value = 0;
  else if (text.getAsInteger(10, value))
    return error("--schedule " + assignment + ": expected " + name + "=<integer>" +
                 (t->automatic.empty() ? "" : " or " + name + "=auto"));
  if (text != "auto") {
    if (value < t->min || value > t->max)
      return error(llvm::formatv("--schedule {0}: {1} must be in [{2}, {3}]{4}, got {5}",
                                 assignment, name, t->min, t->max,
                                 t->automatic.empty() ? "" : " or auto", value));
    if (t->multipleOfVectorWidth && value % vectorWidth != 0)
      return error(llvm::formatv("--schedule {0}: {1} must be a multiple of the "
                                 "target's vector width ({2} f32 lanes), got {3}",
                                 assignment, name, vectorWidth, value));
  }
  values[name] = value;
  return llvm::Error::success();
}

int64_t Schedule::get(llvm::StringRef name) const {
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  const Tunable *t = find(name);
  assert(t != tunables.end() && "asking for a tunable the backend does not declare");
  return t->defaultValue;
}

llvm::StringRef Schedule::getChoice(llvm::StringRef name) const {
  const Tunable *t = find(name);
  assert(t != tunables.end() && !t->choices.empty() && "not an enumerated tunable");
  return t->choices[get(name)];
}

void Schedule::print(llvm::raw_ostream &os) const {
  llvm::interleave(
      tunables, os,
      [&](const Tunable &t) {
        int64_t v = get(t.name);
        os << t.name << '=';
        if (!t.choices.empty())
          os << t.choices[v];
        else if (v == 0 && !t.automatic.empty())
          os << "auto";
        else
          os << v;
      },
      " ");
}

void attnc::printTunables(llvm::ArrayRef<Tunable> tunables, llvm::raw_ostream &os) {
  for (const Tunable &t : tunables) {
    if (!t.choices.empty()) {
      os << llvm::formatv("  {0,-15} {1}\n  {2,-15} default {3}; one of {4}\n", t.name,
                          t.meaning, "", t.choices[t.defaultValue], llvm::join(t.choices, ", "));
      continue;
    }
    std::string def = t.defaultValue == 0 && !t.automatic.empty()
                          ? "auto (" + t.automatic.str() + ")"
                          : std::to_string(t.defaultValue);
    os << llvm::formatv("  {0,-15} {1}\n  {2,-15} default {3}; range [{4}, {5}]{6}\n",
                        t.name, t.meaning, "", def, t.min, t.max,
                        t.multipleOfVectorWidth ? ", a multiple of the vector width" : "");
  }
}
