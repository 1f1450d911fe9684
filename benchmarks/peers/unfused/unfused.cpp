// Unfused attention, as a user would write it with a BLAS: per (batch, head)
//
//   S = scale * Q K^T      one sgemm into a seq x seq float buffer (reused across heads)
//   mask, row softmax      S := softmax(S + mask) row by row (mask: -inf where not kept)
//   O = S V                one sgemm
//
// Two implementations behind one C ABI (called from benchmarks/peers/unfused_peers.py):
//   UNFUSED_OPENBLAS  cblas_sgemm for both products (threads: openblas_set_num_threads); the
//                     mask and the softmax are one loop of ours over the rows (expf vectorised
//                     through glibc's libmvec), which reads the boolean keep matrix instead of
//                     adding a float mask. The loop runs on the same OpenMP threads as an
//                     OpenMP build of OpenBLAS (build.sh links Debian's libopenblas0-openmp when
//                     installed); with the pthreads build it runs on one thread, because
//                     OpenBLAS's spinning workers and an OpenMP team on the same cores slow both
//                     (2.5x on 2 cores, measured).
//   UNFUSED_ONEDNN    oneDNN matmul primitives for both products; the scale is the first
//                     matmul's output scale and the mask its binary-add post-op (an additive
//                     float mask, 0 or -inf, built once at creation); the softmax is oneDNN's
//                     softmax primitive, in place. Threads: omp_set_num_threads (Debian's
//                     oneDNN runs on OpenMP), set before the primitives are created and before
//                     every run.
// Layout bhsd, float32; query head h reads key/value head h / (heads / kv_heads) (GQA in place,
// nothing repeated). Every variant computes all seq^2 scores: nothing is skipped.
//
// bf16 (UNFUSED_BF16; oneDNN only): q, k, v and out are bf16 (raw 16-bit patterns), as a user
// of oneDNN writes bf16 attention:
//   S = scale * Q K^T      bf16 x bf16 matmul, f32 accumulation, f32 dst (+ the mask post-op)
//   P = softmax(S)         oneDNN's softmax_v2, f32 src, bf16 dst: P converted to bf16
//   O = P V                bf16 x bf16 matmul, f32 accumulation, bf16 dst
// so besides the f32 score buffer there is a bf16 seq x seq buffer for P (6 * seq^2 bytes in
// all). OpenBLAS has a bf16 GEMM only when built with BUILD_BFLOAT16 (cblas_sbgemm), which
// Debian's build is not: the Python side reports that as unsupported.
//
// Written against oneDNN 2.x (Debian 12's libdnnl-dev 2.6.3): 3.x removed the op descriptors.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#if DNNL_VERSION_MAJOR != 2
#error "unfused.cpp uses the oneDNN 2.x API (Debian 12's libdnnl-dev 2.6)"
#endif

// glibc declares its vector expf variants only under -ffast-math; declaring them here lets the
// row loops vectorise (with -fno-math-errno) without fast-math's changes to inf handling.
extern "C" float expf(float) throw() __attribute__((__simd__("notinbranch")));

namespace {

thread_local std::string last_error;

enum { UNFUSED_OPENBLAS = 0, UNFUSED_ONEDNN = 1 };
enum { UNFUSED_F32 = 0, UNFUSED_BF16 = 1 };

struct Onednn {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::matmul scores, output;
  dnnl::primitive softmax;             // softmax_forward (f32), softmax_v2_forward (bf16)
  dnnl::memory q, kt, v, s, p, o, mask;  // q, kt, v, o: data handles set per head
  std::vector<float> mask_values;     // additive mask, seq x seq, when masked
};

}  // namespace

struct unfused {
  int impl, dtype, batch, heads, kv_heads, seq, head_dim, threads;
  float scale;
  const uint8_t *keep;  // OpenBLAS: the caller's keep matrix (nullptr: dense)
  float *s;             // seq x seq scores, allocated at creation, first touched by a run
  uint16_t *p;          // bf16: seq x seq probabilities in bf16 (likewise); else nullptr
  Onednn *dnn;
  size_t element_bytes() const { return dtype == UNFUSED_BF16 ? 2 : 4; }
};

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

void create_onednn(unfused *u) {
  const int64_t S = u->seq, D = u->head_dim;
  Onednn *d = u->dnn = new Onednn();
  const dt io = u->dtype == UNFUSED_BF16 ? dt::bf16 : dt::f32;  // q, k, v, out (and P)
  dnnl::memory::desc q_md({S, D}, io, tag::ab);
  dnnl::memory::desc kt_md({D, S}, io, tag::ba);  // K [S, D] row-major, read as K^T
  dnnl::memory::desc v_md({S, D}, io, tag::ab);
  dnnl::memory::desc s_md({S, S}, dt::f32, tag::ab);
  dnnl::memory::desc p_md({S, S}, io, tag::ab);  // f32: S itself (softmax in place)

  dnnl::primitive_attr attr;
  attr.set_output_scales(0, {u->scale});
  if (u->keep) {
    d->mask_values.resize(S * S);
    for (int64_t i = 0; i < S * S; i++) d->mask_values[i] = u->keep[i] ? 0.0f : -INFINITY;
    dnnl::post_ops ops;
    ops.append_binary(dnnl::algorithm::binary_add, s_md);
    attr.set_post_ops(ops);
    d->mask = dnnl::memory(s_md, d->engine, d->mask_values.data());
  }
  d->scores = dnnl::matmul(dnnl::matmul::primitive_desc(
      dnnl::matmul::desc(q_md, kt_md, s_md), attr, d->engine));
  if (u->dtype == UNFUSED_BF16)
    d->softmax = dnnl::softmax_v2_forward(dnnl::softmax_v2_forward::primitive_desc(
        dnnl::softmax_v2_forward::desc(dnnl::prop_kind::forward_inference,
                                       dnnl::algorithm::softmax_accurate, s_md, p_md, 1),
        d->engine));
  else
    d->softmax = dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(
        dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, s_md, 1), d->engine));
  d->output = dnnl::matmul(dnnl::matmul::primitive_desc(
      dnnl::matmul::desc(p_md, v_md, q_md), d->engine));
  d->p = u->dtype == UNFUSED_BF16 ? dnnl::memory(p_md, d->engine, u->p)
                                  : dnnl::memory(s_md, d->engine, u->s);
  d->q = dnnl::memory(q_md, d->engine, DNNL_MEMORY_NONE);
  d->kt = dnnl::memory(kt_md, d->engine, DNNL_MEMORY_NONE);
  d->v = dnnl::memory(v_md, d->engine, DNNL_MEMORY_NONE);
  d->o = dnnl::memory(q_md, d->engine, DNNL_MEMORY_NONE);
  d->s = dnnl::memory(s_md, d->engine, u->s);
}

// Row softmax of s (seq x seq) in place; keep (nullable) masks entries out. A row with nothing
// kept becomes zeros (attnc's convention; none of the benchmark's masks has one).
void softmax_rows(float *s, const uint8_t *keep, int64_t n, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; i++) {
    float *row = s + i * n;
    const uint8_t *k = keep ? keep + i * n : nullptr;
    float m = -FLT_MAX, sum = 0.0f;
    if (k) {
#pragma omp simd reduction(max : m)
      for (int64_t j = 0; j < n; j++) m = std::max(m, k[j] ? row[j] : -FLT_MAX);
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < n; j++) {
        float e = expf(row[j] - m);
        e = k[j] ? e : 0.0f;
        row[j] = e;
        sum += e;
      }
    } else {
#pragma omp simd reduction(max : m)
      for (int64_t j = 0; j < n; j++) m = std::max(m, row[j]);
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < n; j++) {
        float e = expf(row[j] - m);
        row[j] = e;
        sum += e;
      }
    }
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
#pragma omp simd
    for (int64_t j = 0; j < n; j++) row[j] *= inv;
  }
}

// OpenBLAS's own threads are OpenMP's (openblas_get_parallel() == 2) or a pthreads pool (1).
bool openblas_is_openmp() { return openblas_get_parallel() == 2; }

void run_openblas(unfused *u, const float *q, const float *k, const float *v, float *out) {
  const int64_t S = u->seq, D = u->head_dim, group = u->heads / u->kv_heads;
  openblas_set_num_threads(u->threads);
  const int softmax_threads = openblas_is_openmp() ? u->threads : 1;
  for (int64_t b = 0; b < u->batch; b++)
    for (int64_t h = 0; h < u->heads; h++) {
      const int64_t qo = (b * u->heads + h) * S * D;
      const int64_t ko = (b * u->kv_heads + h / group) * S * D;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, S, S, D, u->scale, q + qo, D,
                  k + ko, D, 0.0f, u->s, S);
      softmax_rows(u->s, u->keep, S, softmax_threads);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, S, D, S, 1.0f, u->s, S, v + ko, D,
                  0.0f, out + qo, D);
    }
}

// q, k, v, out: float32, or bf16 bit patterns (u->dtype); offsets are in elements.
void run_onednn(unfused *u, const void *q, const void *k, const void *v, void *out) {
  const int64_t S = u->seq, D = u->head_dim, group = u->heads / u->kv_heads;
  const size_t e = u->element_bytes();
  auto at = [e](const void *base, int64_t offset) {
    return const_cast<char *>(static_cast<const char *>(base)) + offset * e;
  };
  Onednn *d = u->dnn;
  omp_set_num_threads(u->threads);
  for (int64_t b = 0; b < u->batch; b++)
    for (int64_t h = 0; h < u->heads; h++) {
      const int64_t qo = (b * u->heads + h) * S * D;
      const int64_t ko = (b * u->kv_heads + h / group) * S * D;
      d->q.set_data_handle(at(q, qo));
      d->kt.set_data_handle(at(k, ko));
      d->v.set_data_handle(at(v, ko));
      d->o.set_data_handle(at(out, qo));
      std::unordered_map<int, dnnl::memory> args{
          {DNNL_ARG_SRC, d->q}, {DNNL_ARG_WEIGHTS, d->kt}, {DNNL_ARG_DST, d->s}};
      if (u->keep) args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = d->mask;
      d->scores.execute(d->stream, args);
      d->softmax.execute(d->stream, {{DNNL_ARG_SRC, d->s}, {DNNL_ARG_DST, d->p}});
      d->output.execute(d->stream,
                        {{DNNL_ARG_SRC, d->p}, {DNNL_ARG_WEIGHTS, d->v}, {DNNL_ARG_DST, d->o}});
    }
  d->stream.wait();
}

}  // namespace

extern "C" {

const char *unfused_last_error(void) { return last_error.c_str(); }

// The C ABI's version, checked by unfused_peers.py: 2 added unfused_create's dtype.
int unfused_abi_version(void) { return 2; }

// The libraries as loaded, e.g. "OpenBLAS 0.3.21 ... USE_OPENMP ... (OpenMP threads); oneDNN 2.6.3 (OpenMP)".
const char *unfused_info(void) {
  static std::string info;
  const dnnl_version_t *v = dnnl_version();
  info = std::string(openblas_get_config()) +
         (openblas_is_openmp() ? " (OpenMP threads" : " (pthreads: softmax on one thread") +
         "); oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + (v->cpu_runtime == DNNL_RUNTIME_OMP ? " (OpenMP)" : "");
  return info.c_str();
}

void unfused_destroy(unfused *u) {
  if (!u) return;
  delete u->dnn;
  std::free(u->s);
  std::free(u->p);
  delete u;
}

// impl: 0 OpenBLAS, 1 oneDNN. dtype: 0 float32, 1 bf16 (oneDNN only). keep: nullptr (dense)
// or seq x seq bytes, nonzero = attend; the OpenBLAS implementation reads it on every run (the
// caller keeps it alive), oneDNN copies it into its float mask here. The seq x seq score
// buffers are allocated here but not touched, so their pages are faulted in by the first run.
// Returns nullptr on error (unfused_last_error).
unfused *unfused_create(int impl, int dtype, int batch, int heads, int kv_heads, int seq,
                        int head_dim, float scale, const uint8_t *keep, int threads) {
  unfused *u = nullptr;
  try {
    if ((impl != UNFUSED_OPENBLAS && impl != UNFUSED_ONEDNN) || batch < 1 || heads < 1 ||
        kv_heads < 1 || heads % kv_heads || seq < 1 || head_dim < 1 || threads < 1 ||
        (dtype != UNFUSED_F32 && dtype != UNFUSED_BF16)) {
      last_error = "unfused_create: bad arguments";
      return nullptr;
    }
    if (dtype == UNFUSED_BF16 && impl != UNFUSED_ONEDNN) {
      last_error = "unfused_create: bf16 is implemented with oneDNN only";
      return nullptr;
    }
    u = new unfused{impl, dtype, batch, heads, kv_heads, seq, head_dim, threads, scale, keep,
                    nullptr, nullptr, nullptr};
    u->s = static_cast<float *>(std::malloc(sizeof(float) * size_t(seq) * size_t(seq)));
    if (dtype == UNFUSED_BF16)
      u->p = static_cast<uint16_t *>(std::malloc(sizeof(uint16_t) * size_t(seq) * size_t(seq)));
    if (!u->s || (dtype == UNFUSED_BF16 && !u->p)) {
      last_error = "unfused_create: cannot allocate the seq x seq score buffers";
      unfused_destroy(u);
      return nullptr;
    }
    if (impl == UNFUSED_ONEDNN) {
      omp_set_num_threads(threads);  // some oneDNN kernels pick their blocking at creation
      create_onednn(u);
    }
    return u;
  } catch (const std::exception &e) {
    last_error = std::string("unfused_create: ") + e.what();
  }
  unfused_destroy(u);
  return nullptr;
}

// q [B, H, S, D], k and v [B, KVH, S, D], out [B, H, S, D], all C-contiguous, float32 or
// (dtype bf16) bf16.
int unfused_run(unfused *u, const void *q, const void *k, const void *v, void *out) {
  try {
    if (u->impl == UNFUSED_OPENBLAS)
      run_openblas(u, static_cast<const float *>(q), static_cast<const float *>(k),
                   static_cast<const float *>(v), static_cast<float *>(out));
    else
      run_onednn(u, q, k, v, out);
    return 0;
  } catch (const std::exception &e) {
    last_error = std::string("unfused_run: ") + e.what();
    return 1;
  }
}

}  // extern "C"
