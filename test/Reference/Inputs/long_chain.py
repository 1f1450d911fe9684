"""Prints a spec whose score_mod adds 1e-7 to the score N times (default 2000): exact f32
arithmetic gives another result than the same chain in double."""
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
print("attn.kernel @chain {")
print("  attn.attention {num_heads = 2, head_dim = 64, dtype = f32, layout = bhsd,")
print("                  mask = #attn.full, outputs = [out, lse]}")
print("    score_mod {")
print("    ^bb0(%s0: f32, %b: index, %h: index, %q: index, %kv: index):")
print("      %c = arith.constant 1.0e-07 : f32")
for i in range(n):
    print("      %%s%d = arith.addf %%s%d, %%c : f32" % (i + 1, i))
print("      attn.yield %%s%d : f32" % n)
print("    }")
print("}")
