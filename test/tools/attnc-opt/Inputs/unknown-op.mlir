// An op the dialect does not define.
attn.kernel @k {
  attn.decode {num_heads = 8}
}
