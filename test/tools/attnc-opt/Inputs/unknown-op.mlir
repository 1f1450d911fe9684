// An op the dialect does not define.
attn.kernel @k {
  attn.flash {num_heads = 8}
}
