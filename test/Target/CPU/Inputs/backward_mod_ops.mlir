// Backward kernels whose score_mods chain every float op a region may use (test/Target/CPU/
// backward-mod-ops.test): their derivatives, emitted by the kernel (InlineModSlope.cpp),
// against the reference's (ModInterpreter).
attn.kernel @arith {
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                  mask = #attn.causal<top_left>, outputs = [dq, dk, dv]}
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %c = arith.constant 1.5 : f32
    %m = arith.mulf %s, %c : f32
    %a = arith.addf %m, %c : f32
    %sq = arith.mulf %s, %s : f32
    %two = arith.constant 2.0 : f32
    %den = arith.addf %sq, %two : f32
    %qt = arith.divf %s, %den : f32
    %sub = arith.subf %a, %qt : f32
    %n = arith.negf %sub : f32
    %r2 = arith.remf %s, %c : f32
    %r = arith.addf %n, %r2 : f32
    attn.yield %r : f32
  }
}
attn.kernel @minmax {
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                  mask = #attn.causal<top_left>, outputs = [dq, dk, dv]}
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %z = arith.constant 0.5 : f32
    %mx = arith.maximumf %s, %z : f32
    %mn = arith.minimumf %s, %z : f32
    %two = arith.constant 2.0 : f32
    %sm = arith.mulf %s, %two : f32
    %mxn = arith.maxnumf %sm, %mn : f32
    %mnn = arith.minnumf %z, %sm : f32
    %a = arith.addf %mx, %mn : f32
    %bd = arith.subf %mxn, %mnn : f32
    %r = arith.addf %a, %bd : f32
    attn.yield %r : f32
  }
}
attn.kernel @select_abs {
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                  mask = #attn.causal<top_left>, outputs = [dq, dk, dv]}
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %zero = arith.constant 0.0 : f32
    %gt = arith.cmpf ogt, %s, %zero : f32
    %e = math.exp %s : f32
    %t = math.tanh %s : f32
    %p = arith.select %gt, %t, %e : f32
    %ab = math.absf %s : f32
    %c = arith.constant 0.3 : f32
    %w = arith.mulf %ab, %c : f32
    %r = arith.addf %p, %w : f32
    attn.yield %r : f32
  }
}
attn.kernel @exp_log {
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                  mask = #attn.causal<top_left>, outputs = [dq, dk, dv]}
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %one = arith.constant 1.0 : f32
    %e = math.exp %s : f32
    %e1 = arith.addf %e, %one : f32
    %sp = math.log %e1 : f32
    %l2 = math.log2 %e1 : f32
    %lp = math.log1p %e : f32
    %e2 = math.exp2 %s : f32
    %em = math.expm1 %s : f32
    %c = arith.constant 0.25 : f32
    %a = arith.addf %sp, %l2 : f32
    %lc = arith.mulf %lp, %c : f32
    %d = arith.addf %e2, %em : f32
    %dd = arith.mulf %d, %c : f32
    %ab = arith.addf %a, %lc : f32
    %r = arith.addf %ab, %dd : f32
    attn.yield %r : f32
  }
}
attn.kernel @roots_pow {
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                  mask = #attn.causal<top_left>, outputs = [dq, dk, dv]}
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %one = arith.constant 1.0 : f32
    %sq = arith.mulf %s, %s : f32
    %x = arith.addf %sq, %one : f32
    %rt = math.sqrt %x : f32
    %rs = math.rsqrt %x : f32
    %c15 = arith.constant 1.5 : f32
    %pw = math.powf %x, %c15 : f32
    %two = arith.constant 2.0 : f32
    %pe = math.powf %two, %s : f32
    %c = arith.constant 0.1 : f32
    %a = arith.addf %rt, %rs : f32
    %pp = arith.addf %pw, %pe : f32
    %bc = arith.mulf %pp, %c : f32
    %r = arith.addf %a, %bc : f32
    attn.yield %r : f32
  }
}
attn.kernel @trig_erf {
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                  mask = #attn.causal<top_left>, outputs = [dq, dk, dv]}
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %sn = math.sin %s : f32
    %cs = math.cos %s : f32
    %at = math.atan %s : f32
    %ef = math.erf %s : f32
    %c = arith.constant 0.5 : f32
    %a = arith.addf %sn, %at : f32
    %ce2 = arith.addf %cs, %ef : f32
    %bc = arith.mulf %ce2, %c : f32
    %r = arith.addf %a, %bc : f32
    attn.yield %r : f32
  }
}
attn.kernel @fma_rounding {
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                  mask = #attn.causal<top_left>, outputs = [dq, dk, dv]}
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %c = arith.constant 0.5 : f32
    %f = math.fma %s, %s, %c : f32
    %fl = math.floor %s : f32
    %ce = math.ceil %s : f32
    %k = arith.constant 0.1 : f32
    %g = arith.addf %fl, %ce : f32
    %gk = arith.mulf %g, %k : f32
    %r = arith.addf %f, %gk : f32
    attn.yield %r : f32
  }
}
