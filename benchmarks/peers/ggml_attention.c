/* llama.cpp's CPU flash attention (ggml_flash_attn_ext, the op its decode steps run) as a
 * benchmark peer: a graph of that one op over the caller's buffers, planned once and computed
 * per call on ggml's CPU backend. Built against the ggml that PyPI's llama-cpp-python source
 * vendors (benchmarks/peers/build_ggml.sh); serving.py loads it with ctypes.
 *
 * Layouts (ggml lists dims innermost first): q [batch, heads, seq_q, head_dim] f32 is ggml's
 * [head_dim, seq_q, heads, batch]; k and v [batch, kv_heads, seq_kv, head_dim] (f32 or bf16)
 * are [head_dim, seq_kv, kv_heads, batch]. The result is [head_dim, heads, seq_q, batch] f32:
 * for one query token the memory of out [batch, heads, 1, head_dim]. No mask (every key). */
#include "ggml-cpu.h"
#include "ggml.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

struct ggml_attention {
  struct ggml_context *ctx;
  struct ggml_cgraph *graph;
  struct ggml_cplan plan;
};

/* A prepared call, or NULL (more than one query token, or ggml refused). */
struct ggml_attention *ggml_attention_prepare(int bf16_kv, int64_t batch, int64_t heads,
                                              int64_t kv_heads, int64_t seq_q, int64_t seq_kv,
                                              int64_t dim, float *q, void *k, void *v,
                                              float *out, int threads) {
  if (seq_q != 1)
    return NULL;
  struct ggml_init_params params = {64 * 1024 * 1024, NULL, /*no_alloc=*/1};
  struct ggml_attention *s = calloc(1, sizeof(*s));
  s->ctx = ggml_init(params);
  enum ggml_type kv = bf16_kv ? GGML_TYPE_BF16 : GGML_TYPE_F32;
  struct ggml_tensor *tq = ggml_new_tensor_4d(s->ctx, GGML_TYPE_F32, dim, seq_q, heads, batch);
  struct ggml_tensor *tk = ggml_new_tensor_4d(s->ctx, kv, dim, seq_kv, kv_heads, batch);
  struct ggml_tensor *tv = ggml_new_tensor_4d(s->ctx, kv, dim, seq_kv, kv_heads, batch);
  tq->data = q;
  tk->data = k;
  tv->data = v;
  struct ggml_tensor *r =
      ggml_flash_attn_ext(s->ctx, tq, tk, tv, NULL, 1.0f / sqrtf((float)dim), 0.0f, 0.0f);
  r->data = out;
  s->graph = ggml_new_graph(s->ctx);
  ggml_build_forward_expand(s->graph, r);
  s->plan = ggml_graph_plan(s->graph, threads, NULL);
  s->plan.work_data = malloc(s->plan.work_size ? s->plan.work_size : 1);
  return s;
}

/* 0, or ggml's status. */
int ggml_attention_run(struct ggml_attention *s) {
  return (int)ggml_graph_compute(s->graph, &s->plan);
}

void ggml_attention_free(struct ggml_attention *s) {
  free(s->plan.work_data);
  ggml_free(s->ctx);
  free(s);
}
