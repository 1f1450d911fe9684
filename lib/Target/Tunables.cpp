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

/// What tile sizes are multiples of, in words.
static std::string stepText(int64_t step, llvm::StringRef stepMeaning) {
  if (!stepMeaning.empty())
    return stepMeaning.str();
  return llvm::formatv("the target's vector width ({0} f32 lanes)", step).str();
}

llvm::Error Schedule::set(llvm::StringRef assignment, int64_t step,
                          llvm::StringRef stepMeaning) {
  auto [name, text] = assignment.split('=');
  name = name.trim();
  text = text.trim();
  const Tunable *t = find(name);
  if (t == tunables.end())
    return error("unknown tunable '" + name + "' in --schedule " + assignment +
                 "; this target has " + names(tunables));
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
    if (t->multipleOfVectorWidth && value % step != 0)
      return error(llvm::formatv("--schedule {0}: {1} must be a multiple of {2}, got {3}",
                                 assignment, name, stepText(step, stepMeaning), value));
    if (t->powerOfTwo && !llvm::isPowerOf2_64(value))
      return error(llvm::formatv("--schedule {0}: {1} must be a power of two, got {2}",
                                 assignment, name, value));
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

void Schedule::print(llvm::raw_ostream &os, llvm::StringRef family) const {
  llvm::SmallVector<Tunable> shown;
  for (const Tunable &t : tunables)
    if (family.empty() || t.family == family)
      shown.push_back(t);
  llvm::interleave(
      shown, os,
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

void attnc::printTunables(const Schedule &schedule, int64_t step,
                          llvm::StringRef stepMeaning, llvm::raw_ostream &os) {
  for (const Tunable &t : schedule.declaration()) {
    int64_t value = schedule.get(t.name);
    if (!t.choices.empty()) {
      os << llvm::formatv("  {0,-15} {1}\n  {2,-15} default {3}; one of {4}\n", t.name,
                          t.meaning, "", t.choices[value], llvm::join(t.choices, ", "));
      continue;
    }
    std::string def = value == 0 && !t.automatic.empty() ? "auto (" + t.automatic.str() + ")"
                                                         : std::to_string(value);
    if (schedule.isExplicit(t.name))
      def += " on this target";
    os << llvm::formatv("  {0,-15} {1}\n  {2,-15} default {3}; range [{4}, {5}]{6}{7}\n",
                        t.name, t.meaning, "", def, t.min, t.max,
                        t.multipleOfVectorWidth
                            ? ", a multiple of " + stepText(step, stepMeaning)
                            : std::string(),
                        t.powerOfTwo ? ", a power of two" : "");
  }
}
