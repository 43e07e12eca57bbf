/* What made a blocking call, in the user's terms, and the guides' sync-free alternative: the
 * rules are data, tried in order, the first that holds wins. Each condition is a list of
 * alternatives ("a|b"), any of which may appear as a substring: of a native frame's symbol or
 * library (mangled C++ names hold the identifiers), of a Python frame's file, of the text of
 * the lines that made the call, of the API's base name, of the copy's direction, of the file of
 * the library's frame that made it (a prefix of its path from its installed package on). A call
 * no rule knows is reported as unknown, never guessed.
 * A sync inside a library's own code (a frame of an installed package other than torch between
 * the user's line and the call) that no rule of that library names keeps the operation its
 * rule gives, and its fix says where it is and that the user cannot change it: "inside
 * transformers (_sample): an upstream change, or a different call". To add a pattern: one line
 * here, one test in tests/unit/test_audit_python.c (test_audit_libsites.c for a library's). */
#include "analyze/analyze.h"

#include <string.h>

#define SCALAR_FIX                                                                                 \
    "keep it on the GPU: accumulate and read every N steps (or once after the loop); several "     \
    "values: torch.stack them and read once"
#define HOST_COPY_FIX                                                                              \
    "copy into a pinned buffer with non_blocking=True and read it after an event (double "         \
    "buffering), or keep the work on the GPU"
#define SHAPE "data-dependent shape: "
#define UPSTREAM "an upstream change, or a different call"
#define GENERATION "transformers/generation/"

const char *const sb_audit_rule_frameworks[] = {"torch", NULL};

/* clang-format off */
const sb_audit_rule sb_audit_rules[] = {
    /* syncs of a library's own code, named by the file of the library's frame that made the
     * call (the last field) and that line's text; what in the user's call leads there */
    {"inside transformers: generate()'s stopping check across ranks (synced_gpus)",
     "transformers' generate() with synced_gpus (on by default under DeepSpeed ZeRO-3 or FSDP "
     "with more than one rank) sums a flag over the ranks and reads it after every token, so "
     "that they step together: needed while the ranks hold shards of the weights; otherwise "
     "pass synced_gpus=False", NULL, NULL, NULL, NULL, "this_peer_finished_flag", NULL,
     GENERATION},
    {"inside transformers: generate()'s stopping check after every token",
     "transformers' generate() reads on the host, after each new token, whether every sequence "
     "has finished (a sync a token); no option of generate() skips it: " UPSTREAM " (a decoding "
     "loop of your own that checks every N tokens)", "device-branch", NULL, NULL, NULL,
     "this_peer_finished|unfinished_sequences", NULL, GENERATION},
    {"inside transformers: generate()'s streamer gets each new token on the host",
     "transformers' generate() copies every new token to the host for its streamer (a sync a "
     "token): pass no streamer where the tokens are not needed as they come, and decode "
     "generate()'s output once it returns", NULL, NULL, NULL, NULL, "streamer.put(", NULL,
     GENERATION},
    {"inside torch.distributions: argument validation (validate_args)",
     "torch.distributions checks a distribution's arguments and samples on the host: pass "
     "validate_args=False, or call torch.distributions.Distribution.set_default_validate_args("
     "False) once", NULL, NULL, NULL, NULL, "_is_all_true(valid)|valid.all()", NULL,
     "torch/distributions/"},
    {"inside torch: clip_grad_norm_'s non-finite check (error_if_nonfinite=True)",
     "torch's clip_grad_norm_ with error_if_nonfinite=True reads the total norm on the host at "
     "every call: leave it False (the default) and check torch.isfinite(norm) every N steps",
     "log-every", NULL, NULL, NULL, "error_if_nonfinite", NULL, "torch/nn/utils/clip_grad"},
    {"print(tensor) / str(tensor)",
     "print a value read every N steps (accumulated on the GPU), not the tensor each step",
     "log-every", NULL, NULL, "torch/_tensor_str.py", NULL, NULL, NULL},
    /* inside libraries */
    {"inside a library: DDP's step timer (CudaTimer::measureDifference)",
     "DDP times the iterations it samples; model._set_ddp_runtime_logging_sample_rate(N) makes "
     "them rarer", NULL, NULL, "CudaTimer|measureDifference", NULL, NULL, NULL, NULL},
    {"inside a library: NCCL",
     "a collective's result read on the host waits for every rank: read it every N steps",
     NULL, NULL, "libnccl|ncclGroupEnd|ncclCommInit", NULL, NULL, NULL, NULL},
    {"inside a library: torch.linalg's error check",
     "the _ex variant (torch.linalg.inv_ex, cholesky_ex, ...) with its info tensor checked on "
     "the GPU or every N steps", NULL, NULL, "_linalg_check_errors", NULL, NULL, NULL, NULL},
    {"inside a CUDA library (cuBLAS, cuSOLVER, cuFFT, cuSPARSE, cuDNN)",
     "the library's handles and workspaces created once, outside the loop; its own syncs are "
     "its own (at start-up and teardown they cost nothing per step)", NULL, NULL,
     "libcublas|libcusolver|libcufft|libcusparse|libcudnn", NULL, NULL, NULL, NULL},
    /* data-dependent shapes: the output's size is read back to allocate it */
    {SHAPE "boolean mask (x[mask], masked_select)",
     "torch.where(mask, x, 0) or a masked reduction: a fixed shape, no count read back",
     "dynamic-shape", NULL, "masked_select|index_Tensor|index_put", NULL, NULL, NULL, NULL},
    {SHAPE "nonzero", "torch.nonzero_static(x, size=N), or a mask of fixed shape",
     "dynamic-shape", NULL, "nonzero_cuda|nonzero_out|7nonzero4call|::nonzero(", NULL, NULL, NULL,
     NULL},
    {SHAPE "unique",
     "a fixed-size result (torch.bincount(x, minlength=N) for small integer ranges), or unique "
     "once outside the loop", "dynamic-shape", NULL, "unique_cuda|unique_dim|_unique", NULL, NULL,
     NULL, NULL},
    {SHAPE "repeat_interleave without output_size",
     "pass output_size= (the total, known on the host) to repeat_interleave", "dynamic-shape",
     NULL, "repeat_interleave", NULL, NULL, NULL, NULL},
    /* a GPU value that decides Python control flow */
    {"Python branch on a GPU value (if t:, while t:, bool(t), if t.any():)",
     "keep the decision on the GPU (torch.where(cond, a, b)), or branch on a value read every N "
     "steps", "device-branch", NULL, "is_nonzero", NULL, NULL, NULL, NULL},
    /* copies to the host, named by the source line */
    {"copy to host: .tolist()", HOST_COPY_FIX, "double-buffer", NULL, NULL, NULL, ".tolist(",
     NULL, NULL},
    {"copy to host: .numpy()", HOST_COPY_FIX, "double-buffer", NULL, NULL, NULL, ".numpy(", NULL,
     NULL},
    /* scalar reads */
    {"scalar read: .item()", SCALAR_FIX, "log-every", NULL, "_local_scalar_dense", NULL,
     ".item(", NULL, NULL},
    {"scalar read: float(t) / int(t)", SCALAR_FIX, "log-every", NULL, "_local_scalar_dense",
     NULL, "float(|int(|bool(|complex(", NULL, NULL},
    {"scalar read (a GPU value to a Python number)", SCALAR_FIX, "log-every", NULL,
     "_local_scalar_dense", NULL, NULL, NULL, NULL},
    {"copy to host: .cpu()", HOST_COPY_FIX, "double-buffer", NULL, NULL, NULL,
     ".cpu(|.to(\"cpu\"|.to('cpu'|device=\"cpu\"|device='cpu'", NULL, NULL},
    {"tensor from host data (torch.tensor(list, device=\"cuda\"))",
     "build it once outside the loop, or from pinned memory with .to(device, "
     "non_blocking=True); constants: torch.full / torch.arange on the GPU", "small-h2d", NULL,
     NULL, NULL, "torch.tensor(|torch.as_tensor(|torch.from_numpy(", NULL, NULL},
    {"copy to host (.cpu(), .to(\"cpu\"), .numpy())", HOST_COPY_FIX, "double-buffer", NULL,
     "_to_copy|copy_", NULL, NULL, "DtoH", NULL},
    {"copy from pageable host memory (.to(\"cuda\"), .cuda())",
     "pin the source (.pin_memory(), once) and copy with non_blocking=True", "copy", NULL,
     "_to_copy|copy_", NULL, NULL, "HtoD", NULL},
    {"copy between host and GPU (.cpu(), .to(...), copy_)", HOST_COPY_FIX, "copy", NULL,
     "_to_copy|copy_", NULL, NULL, NULL, NULL},
    /* explicit syncs */
    {"explicit sync: torch.cuda.synchronize()",
     "remove it (a readback waits for its own stream anyway), or wait on one stream or event",
     "busy-stream", NULL, "device_synchronize", NULL, NULL, NULL, NULL},
    {"explicit sync: stream.synchronize()",
     "let the GPU wait (other.wait_stream(s), s.wait_event(e)); block the host only where it "
     "needs the value", "small-gemm", NULL, "CUDAStream11synchronize|CUDAStream::synchronize",
     NULL, NULL, NULL, NULL},
    {"explicit sync: event.synchronize()",
     "stream.wait_event(ev) keeps the wait on the GPU; ev.query() asks without blocking",
     "small-gemm", "cudaEventSynchronize|cuEventSynchronize", NULL, NULL, NULL, NULL, NULL},
    {"explicit device sync from an extension (ctypes, a C/C++ extension)",
     "sync only the stream the result is on (or an event), and only where the host needs it",
     "busy-stream", "cuCtxSynchronize|cudaDeviceSynchronize|cudaThreadSynchronize",
     "libffi|_ctypes", NULL, NULL, NULL, NULL},
    {"explicit sync: device (cudaDeviceSynchronize, cuCtxSynchronize)",
     "sync only the stream the result is on (or an event), and only where the host needs it",
     "busy-stream", "cuCtxSynchronize|cudaDeviceSynchronize|cudaThreadSynchronize", NULL, NULL,
     NULL, NULL, NULL},
    {"explicit sync: stream (cudaStreamSynchronize)",
     "let the GPU wait (cudaStreamWaitEvent); block the host only where it needs the value",
     "small-gemm", "StreamSynchronize", NULL, NULL, NULL, NULL, NULL},
    /* the allocator */
    {"allocator: torch.cuda.empty_cache()",
     "do not empty the cache in the loop: the caching allocator reuses its blocks", "alloc",
     "cudaFree|cuMemFree", "emptyCache|empty_cache", NULL, NULL, NULL, NULL},
    {"allocator: torch.cuda.empty_cache()",
     "do not empty the cache in the loop: the caching allocator reuses its blocks", "alloc",
     "cudaFree|cuMemFree", NULL, NULL, "empty_cache(", NULL, NULL},
    {"allocator: the caching allocator gave memory back (cudaFree)",
     "keep peak memory steady (allocate once, reuse); "
     "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True avoids free + malloc when fragmented",
     "alloc", "cudaFree|cuMemFree", "libc10_cuda", NULL, NULL, NULL, NULL},
    {"allocator: cudaFree", "allocate once and reuse, or cudaFreeAsync (stream-ordered)",
     "alloc", "cudaFree|cuMemFree", NULL, NULL, NULL, NULL, NULL},
    /* what the API alone says */
    {"async copy with pageable host memory (it blocks)",
     "pin the host buffer (cudaHostAlloc, .pin_memory()) so the copy runs asynchronously",
     "copy", "MemcpyAsync|MemcpyDtoHAsync|MemcpyHtoDAsync|Memcpy2DAsync|Memcpy3DAsync", NULL,
     NULL, NULL, NULL, NULL},
    {"blocking copy (cudaMemcpy)",
     "cudaMemcpyAsync with pinned host memory on the work's stream, waited for by an event",
     "copy", "cudaMemcpy|cuMemcpy", NULL, NULL, NULL, NULL, NULL},
    {"blocking memset (cudaMemset)", "cudaMemsetAsync on the work's stream", NULL,
     "cudaMemset|cuMemset", NULL, NULL, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};
/* clang-format on */

/* Does any alternative of `alts` ("a|b|c") occur in s? */
static int any_in(const char *alts, const char *s)
{
    if (!s)
        return 0;
    for (const char *a = alts; *a;) {
        const char *bar = strchr(a, '|');
        size_t n = bar ? (size_t)(bar - a) : strlen(a);
        for (const char *p = s; (p = strchr(p, a[0])); p++)
            if (!strncmp(p, a, n))
                return 1;
        if (!bar)
            break;
        a = bar + 1;
    }
    return 0;
}

static const char *basename_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int native_has(const sb_audit_stack *s, const char *alts)
{
    for (int i = 0; s && i < s->nframes; i++)
        if (any_in(alts, s->frames[i].sym) || any_in(alts, basename_of(s->frames[i].obj)))
            return 1;
    return 0;
}

static int pyfile_has(const sb_audit_pystack *s, const char *alts)
{
    for (int i = 0; s && i < s->nframes; i++)
        if (any_in(alts, s->frames[i].file))
            return 1;
    return 0;
}

/* The text of the lines that made the call: the innermost frame's, and the library's frame's
 * (a library calling torch), else the user's line (calling torch, or the innermost itself). */
static int source_has(const sb_audit_call *c, const char *alts)
{
    const sb_audit_made *m = c->made;
    if (m && m->via && any_in(alts, m->via_source))
        return 1;
    return any_in(alts, m && m->lib ? m->lib_source : c->source);
}

/* The file of the frame that made the call (the library's, else the innermost) from its
 * installed package on; NULL without Python or outside an installed package. */
static const char *maker_file(const sb_audit_call *c)
{
    const sb_audit_made *m = c->made; /* NULL: a call not attributed (no Python frames) */
    const sb_audit_pyframe *f = m && m->lib ? m->lib : m && m->via ? m->via : c->pyframe;
    return f ? sb_audit_py_in_package(f->file) : NULL;
}

/* Does s begin with any alternative of `alts`? */
static int any_prefix(const char *alts, const char *s)
{
    for (const char *a = alts; s && *a;) {
        size_t n = strcspn(a, "|");
        if (!strncmp(s, a, n))
            return 1;
        a += n + (a[n] == '|');
    }
    return 0;
}

int sb_audit_rule_holds(const sb_audit_rule *r, const sb_audit_proc *p, const sb_audit_call *c)
{
    char api[128];
    sb_audit_base_name(c->api, api, sizeof api);
    if ((r->api && !any_in(r->api, api)) || (r->copy && !any_in(r->copy, c->copy)) ||
        (r->source && !source_has(c, r->source)) || (r->lib && !any_prefix(r->lib, maker_file(c))))
        return 0;
    const sb_audit_stack *st = c->stack >= 0 ? sb_audit_find_stack(p, c->stack) : NULL;
    const sb_audit_pystack *py = c->py >= 0 ? sb_audit_find_pystack(p, c->py) : NULL;
    return (!r->native || native_has(st, r->native)) && (!r->pyfile || pyfile_has(py, r->pyfile));
}

const sb_audit_rule *sb_audit_rule_for(const sb_audit_proc *p, const sb_audit_call *c)
{
    for (const sb_audit_rule *r = sb_audit_rules; r->op; r++)
        if (sb_audit_rule_holds(r, p, c))
            return r;
    return NULL;
}

int sb_audit_name_call(sb_strpool *strs, const sb_audit_call *c, sb_audit_made *m)
{
    const sb_audit_rule *r = c->rule;
    const char *op = r ? r->op : NULL, *fix = r ? r->fix : "";
    char op_buf[512], fix_buf[2048];
    if (m->lib && !(r && r->lib)) { /* the rule's fix is about the library's code */
        if (!r) {
            sb_audit_fmt(op_buf, sizeof op_buf, "inside %s: an operation no rule knows",
                         m->library);
            op = op_buf;
        }
        sb_audit_fmt(fix_buf, sizeof fix_buf, "inside %s (%s): " UPSTREAM "%s%s%s", m->library,
                     m->lib->func, r ? " (upstream, the sync-free way: " : "", r ? r->fix : "",
                     r ? ")" : "");
        fix = fix_buf;
    }
    m->op = op ? sb_audit_intern(strs, op) : NULL;
    m->fix = sb_audit_intern(strs, fix);
    return (op && !m->op) || !m->fix ? -1 : 0;
}
