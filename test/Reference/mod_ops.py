#!/usr/bin/env python3
"""Checks the reference interpreter on every op a score_mod / mask_mod may use.

One kernel per case: 8 heads, seq_q = seq_kv = 1, and a score_mod that ignores the score and
returns f(h). With a single key the softmax is trivial and lse[0, h, 0] is exactly the value
the score_mod yields, so lse.npy holds f(0..7), compared with NumPy in float64
(rtol 1e-6: the f32 rounding of lse, plus float64 vs libm differences far below it).
mask_mod ops are the same ops returning i1, checked through select.
"""
import argparse
import math
import os
import subprocess
import sys

import numpy as np

H = np.arange(8)
X = 0.25 * H - 0.75          # [-0.75, 1.0]
Y = 0.125 * H + 0.5          # [0.5, 1.375]
A = H - 3                    # [-3, 4]
B = H + 1                    # [1, 8]

PRELUDE = """
      %hi = arith.index_cast %h : index to i64
      %hf = arith.sitofp %hi : i64 to f32
      %c025 = arith.constant 0.25 : f32
      %c075 = arith.constant 0.75 : f32
      %t = arith.mulf %hf, %c025 : f32
      %x = arith.subf %t, %c075 : f32
      %c0125 = arith.constant 0.125 : f32
      %c05 = arith.constant 0.5 : f32
      %u = arith.mulf %hf, %c0125 : f32
      %y = arith.addf %u, %c05 : f32
      %c3 = arith.constant 3 : i64
      %a = arith.subi %hi, %c3 : i64
      %c1 = arith.constant 1 : i64
      %bb = arith.addi %hi, %c1 : i64
      %one = arith.constant 1.0 : f32
      %zero = arith.constant 0.0 : f32"""


def fbin(op):
    return "%%r = arith.%s %%x, %%y : f32" % op


def ibin(op, lhs="%a", rhs="%bb"):
    return "%%ri = arith.%s %s, %s : i64\n%%r = arith.sitofp %%ri : i64 to f32" % (op, lhs, rhs)


def fun(op, arg="%x"):
    return "%%r = math.%s %s : f32" % (op, arg)


def cmpf(pred, rhs="%y"):
    return "%%p = arith.cmpf %s, %%x, %s : f32\n%%r = arith.select %%p, %%one, %%zero : f32" % (pred, rhs)


def cmpi(pred):
    return ("%%c0 = arith.constant 0 : i64\n%%p = arith.cmpi %s, %%a, %%c0 : i64\n"
            "%%r = arith.select %%p, %%one, %%zero : f32" % pred)


NAN = "%nz = arith.divf %zero, %zero : f32\n"


def c_fmod(a, b):
    return np.array([math.fmod(p, q) for p, q in zip(a, b)])


def as_unsigned(a):
    return np.where(a < 0, a + 2.0 ** 64, a)


CASES = [
    ("addf", fbin("addf"), X + Y),
    ("subf", fbin("subf"), X - Y),
    ("mulf", fbin("mulf"), X * Y),
    ("divf", fbin("divf"), X / Y),
    ("remf", "%c7 = arith.constant 7.0 : f32\n%x7 = arith.mulf %x, %c7 : f32\n"
             "%r = arith.remf %x7, %y : f32", c_fmod(7 * X, Y)),
    ("negf", "%r = arith.negf %x : f32", -X),
    ("maximumf", "%ym = arith.subf %y, %one : f32\n%r = arith.maximumf %x, %ym : f32",
     np.maximum(X, Y - 1)),
    ("minimumf", "%ym = arith.subf %y, %one : f32\n%r = arith.minimumf %x, %ym : f32",
     np.minimum(X, Y - 1)),
    ("maxnumf", NAN + "%m = arith.maxnumf %nz, %x : f32\n%r = arith.maxnumf %m, %zero : f32",
     np.maximum(X, 0)),
    ("minnumf", NAN + "%m = arith.minnumf %x, %nz : f32\n%r = arith.minnumf %m, %zero : f32",
     np.minimum(X, 0)),
    ("maximumf_nan", NAN + "%m = arith.maximumf %nz, %x : f32\n"
     "%p = arith.cmpf uno, %m, %m : f32\n%r = arith.select %p, %one, %zero : f32",
     np.ones(8)),
] + [
    ("cmpf_" + p, cmpf(p, "%zero"), f(X, 0.0).astype(float))
    for p, f in [("oeq", np.equal), ("one", np.not_equal), ("olt", np.less),
                 ("ole", np.less_equal), ("ogt", np.greater), ("oge", np.greater_equal),
                 ("ueq", np.equal), ("une", np.not_equal), ("ult", np.less),
                 ("ule", np.less_equal), ("ugt", np.greater), ("uge", np.greater_equal),
                 ("ord", lambda a, b: np.ones(8, bool)), ("uno", lambda a, b: np.zeros(8, bool)),
                 ("true", lambda a, b: np.ones(8, bool)), ("false", lambda a, b: np.zeros(8, bool))]
] + [
    # Unordered predicates are true on NaN, ordered ones false.
    ("cmpf_%s_nan" % p, NAN + "%%p = arith.cmpf %s, %%nz, %%x : f32\n"
     "%%r = arith.select %%p, %%one, %%zero : f32" % p, np.full(8, float(p[0] == "u")))
    for p in ("oeq", "olt", "ueq", "ult", "uno", "une")
] + [
    ("absf", fun("absf"), np.abs(X)),
    ("exp", fun("exp"), np.exp(X)),
    ("exp2", fun("exp2"), np.exp2(X)),
    ("expm1", fun("expm1"), np.expm1(X)),
    ("log", fun("log", "%y"), np.log(Y)),
    ("log2", fun("log2", "%y"), np.log2(Y)),
    ("log1p", fun("log1p", "%y"), np.log1p(Y)),
    ("tanh", fun("tanh"), np.tanh(X)),
    ("sqrt", fun("sqrt", "%y"), np.sqrt(Y)),
    ("rsqrt", fun("rsqrt", "%y"), 1 / np.sqrt(Y)),
    ("sin", fun("sin"), np.sin(X)),
    ("cos", fun("cos"), np.cos(X)),
    ("atan", fun("atan"), np.arctan(X)),
    ("erf", fun("erf"), np.array([math.erf(v) for v in X])),
    ("floor", "%x3 = arith.mulf %x, %y : f32\n%r = math.floor %x3 : f32", np.floor(X * Y)),
    ("ceil", "%x3 = arith.mulf %x, %y : f32\n%r = math.ceil %x3 : f32", np.ceil(X * Y)),
    ("powf", "%r = math.powf %y, %x : f32", Y ** X),
    ("fma", "%r = math.fma %x, %y, %c05 : f32", X * Y + 0.5),
    ("addi", ibin("addi"), A + B),
    ("subi", ibin("subi"), A - B),
    ("muli", ibin("muli"), A * B),
    ("divsi", "%c17 = arith.constant 17 : i64\n%n = arith.muli %a, %c17 : i64\n" + ibin("divsi", "%n", "%c3"),
     np.trunc(17 * A / 3)),
    ("divui", ibin("divui", "%hi", "%c3"), H // 3),
    ("remsi", "%c17 = arith.constant 17 : i64\n%n = arith.muli %a, %c17 : i64\n" + ibin("remsi", "%n", "%bb"),
     np.fmod(17 * A, B)),
    ("remui", ibin("remui", "%hi", "%c3"), H % 3),
    ("floordivsi", "%c17 = arith.constant 17 : i64\n%n = arith.muli %a, %c17 : i64\n" + ibin("floordivsi", "%n", "%bb"),
     np.floor_divide(17 * A, B)),
    ("ceildivsi", "%c17 = arith.constant 17 : i64\n%n = arith.muli %a, %c17 : i64\n" + ibin("ceildivsi", "%n", "%bb"),
     -np.floor_divide(-17 * A, B)),
    ("andi", ibin("andi"), A & B),
    ("ori", ibin("ori"), A | B),
    ("xori", ibin("xori"), A ^ B),
    ("maxsi", ibin("maxsi", "%a", "%c1"), np.maximum(A, 1)),
    ("minsi", ibin("minsi", "%a", "%c1"), np.minimum(A, 1)),
    # Unsigned: a negative a is a huge unsigned value, so maxui picks it (still negative
    # once read back as signed) and minui picks 3.
    ("maxui", ibin("maxui", "%a", "%c3"), np.where(A < 0, A, np.maximum(A, 3))),
    ("minui", ibin("minui", "%a", "%c3"), np.where(A < 0, 3, np.minimum(A, 3))),
    ("absi", "%ri = math.absi %a : i64\n%r = arith.sitofp %ri : i64 to f32", np.abs(A)),
] + [
    ("cmpi_" + p, cmpi(p), f(A).astype(float))
    for p, f in [("eq", lambda a: a == 0), ("ne", lambda a: a != 0), ("slt", lambda a: a < 0),
                 ("sle", lambda a: a <= 0), ("sgt", lambda a: a > 0), ("sge", lambda a: a >= 0),
                 ("ult", lambda a: as_unsigned(a) < 0), ("ule", lambda a: as_unsigned(a) <= 0),
                 ("ugt", lambda a: as_unsigned(a) > 0), ("uge", lambda a: as_unsigned(a) >= 0)]
] + [
    ("select", "%p = arith.cmpf olt, %x, %zero : f32\n%r = arith.select %p, %x, %y : f32",
     np.where(X < 0, X, Y)),
    ("index_cast", "%ix = arith.index_cast %a : i64 to index\n%i2 = arith.index_cast %ix : index to i64\n"
     "%r = arith.sitofp %i2 : i64 to f32", A.astype(float)),
    ("index_castui", "%i8 = arith.trunci %a : i64 to i8\n%ix = arith.index_castui %i8 : i8 to index\n"
     "%i2 = arith.index_cast %ix : index to i64\n%r = arith.sitofp %i2 : i64 to f32", np.where(A < 0, A + 256, A)),
    ("extsi", "%i8 = arith.trunci %a : i64 to i8\n%e = arith.extsi %i8 : i8 to i32\n"
     "%r = arith.sitofp %e : i32 to f32", A.astype(float)),
    ("extui", "%i8 = arith.trunci %a : i64 to i8\n%e = arith.extui %i8 : i8 to i32\n"
     "%r = arith.sitofp %e : i32 to f32", np.where(A < 0, A + 256, A)),
    ("trunci", "%c200 = arith.constant 200 : i64\n%w = arith.addi %hi, %c200 : i64\n"
     "%i8 = arith.trunci %w : i64 to i8\n%r = arith.sitofp %i8 : i8 to f32", (200 + H + 128) % 256 - 128),
    ("uitofp", "%i8 = arith.trunci %a : i64 to i8\n%r = arith.uitofp %i8 : i8 to f32", np.where(A < 0, A + 256, A)),
    ("fptosi", "%c10 = arith.constant 10.0 : f32\n%s10 = arith.mulf %x, %c10 : f32\n"
     "%i = arith.fptosi %s10 : f32 to i32\n%r = arith.sitofp %i : i32 to f32", np.trunc(10 * X)),
    ("fptoui", "%c10 = arith.constant 10.0 : f32\n%s10 = arith.mulf %y, %c10 : f32\n"
     "%i = arith.fptoui %s10 : f32 to i32\n%r = arith.uitofp %i : i32 to f32", np.trunc(10 * Y)),
    ("truncf_extf", "%c3f = arith.constant 3.0 : f32\n%third = arith.divf %y, %c3f : f32\n"
     "%hlf = arith.truncf %third : f32 to f16\n%r = arith.extf %hlf : f16 to f32",
     (Y / 3).astype(np.float16).astype(float)),
]


def spec(name, body, result="%r"):
    lines = "\n".join("      " + line for line in body.splitlines())
    return ("attn.kernel @%s {\n  attn.attention {num_heads = 8, head_dim = 4, dtype = f32, "
            "layout = bhsd, mask = #attn.full, outputs = [lse]}\n    score_mod {\n"
            "    ^bb0(%%s: f32, %%b: index, %%h: index, %%q: index, %%kv: index):%s\n%s\n"
            "      attn.yield %s : f32\n    }\n}\n" % (name, PRELUDE, lines, result))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--attnc-run", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    path = os.path.join(args.work, "mod_ops.mlir")
    with open(path, "w") as f:
        f.write("".join(spec(c[0], c[1], *c[3:]) for c in CASES))
    passed = failed = 0
    for case in CASES:
        name, want = case[0], np.asarray(case[2], float)
        out = os.path.join(args.work, name)
        proc = subprocess.run([args.attnc_run, "--reference", path, "--kernel", name,
                               "--seq-q", "1", "-o", out], capture_output=True, text=True)
        if proc.returncode != 0:
            print("FAIL %-16s attnc-run: %s" % (name, proc.stderr.strip()))
            failed += 1
            continue
        got = np.load(os.path.join(out, "lse.npy"))[0, :, 0].astype(float)
        if np.allclose(got, want, rtol=1e-6, atol=1e-7):
            passed += 1
        else:
            print("FAIL %-16s got %s want %s" % (name, got, want))
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
