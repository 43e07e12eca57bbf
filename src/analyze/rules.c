/* What made a blocking call, in the user's terms, and the guides' sync-free alternative: the
 * rules are data, tried in order, the first that holds wins. Each condition is a list of
 * alternatives ("a|b"), any of which may hold: the API's base name, the copy's direction and the
 * text of the lines that made the call hold one as a substring; a native frame's symbol holds one
 * as a substring (mangled C++ names hold the identifiers, addr2line's demangled ones too) in a
 * frame of the rule's own library, whose file name begins with one of `object`; a Python frame's
 * file holds one as whole path components from its package on (`pyfile`), its function is one
 * (`pyfunc`); the file of the library's frame that made the call begins with one (`lib`, from its
 * installed package on). A rule that names a native symbol names its library too, and a Python
 * rule its package (tests/unit/test_audit_libsites.c holds every rule to it): the same name in a
 * stranger's library (XLA's CudaTimer is not DDP's) never fires. A call no rule knows is reported
 * as unknown, with its native frame, never guessed.
 * A sync inside a library's own code (a frame of an installed package other than the frameworks
 * between the user's line and the call) that no rule of that library names keeps the operation
 * its rule gives, and its fix says where it is and that the user cannot change it: "inside
 * transformers (_sample): not in syncbench's framework table; ...". Syncs of the frameworks people
 * train with are rows of frameworks.c, tried first. To add a pattern: one line
 * here, one test in tests/unit/test_audit_python.c (test_audit_libsites.c for a library's). */
#include "analyze/analyze.h"
#include "analyze/frameworks.h"
#include "base/utf8.h"

#include <string.h>

#define SCALAR_FIX                                                                                 \
    "keep it on the GPU: accumulate and read every N steps (or once after the loop); several "     \
    "values: torch.stack them and read once"
#define HOST_COPY_FIX                                                                              \
    "copy into a pinned buffer with non_blocking=True and read it after an event (double "         \
    "buffering), or keep the work on the GPU"
#define SHAPE "data-dependent shape: "
#define GENERATION "transformers/generation/"
#define NCCL_FIX                                                                                   \
    "a collective's result read on the host waits for every rank: read it every N steps"
#define EMPTY_CACHE_FIX                                                                            \
    "do not empty the cache in the loop: the caching allocator reuses its blocks"
#define DEVICE_SYNC_FIX                                                                            \
    "sync only the stream the result is on (or an event), and only where the host needs it"
#define FREE_API "cudaFree|cuMemFree"

/* PyTorch's own native libraries (a file name begins with one): libtorch_cuda.so (and torch
 * 1.x's libtorch_cuda_cu.so), libtorch_cpu.so, libtorch_python.so, libc10.so, libc10_cuda.so */
#define LIBTORCH                                                                                   \
    "libtorch.so|libtorch_cpu.so|libtorch_cuda|libtorch_python.so|libc10.so|libc10_cuda.so"
/* XLA's GPU runtime (stream_executor, PjRt) as JAX loads it: jax's CUDA plugin
 * (jax_cuda12_plugin/xla_cuda_plugin.so), or jaxlib itself (xla_extension.so in older releases,
 * libjax_common.so and _jax.so in newer ones) */
#define XLA_LIBS "xla_cuda_plugin|xla_extension|libjax_common|_jax."

/* JAX's fixes */
#define JAX_SCALAR_FIX                                                                             \
    "keep it on the device: accumulate with jnp ops and read every N steps (or once after the "    \
    "loop); several values: one jax.device_get of a tuple"
#define JAX_HOST_COPY_FIX                                                                          \
    "keep the work on the device (jnp ops); what the host needs, start early with "                \
    "x.copy_to_host_async() and read later, several values with one jax.device_get of a tuple"
#define JAX_WAIT_FIX                                                                               \
    "call jax.block_until_ready only where a value is needed, not after every step (JAX "          \
    "dispatches asynchronously; a value read on the host waits for its own work anyway); keep "    \
    "values on the device (jnp ops; jax.lax.cond / jax.lax.while_loop for control flow); fetch "   \
    "several values at once with one jax.device_get of a tuple"
#define JAX_HOST_MEMORY_FIX                                                                        \
    "copy host data in with jax.device_put of buffers made once and reused, and fetch values "     \
    "less often, several at once (one jax.device_get of a tuple), so that XLA reuses its pinned "  \
    "host pool rather than allocating and freeing for each transfer"

/* jax: its Python (jax/_src/...) is how its operations are called, as torch's is */
const char *const sb_audit_rule_frameworks[] = {"torch", "jax", "jaxlib", NULL};

/* clang-format off */
const sb_audit_rule sb_audit_rules[] = {
    /* syncs of a library's own code, named by the file of the library's frame that made the
     * call (lib) and that line's text; what in the user's call leads there */
    {.op = "inside transformers: generate()'s stopping check across ranks (synced_gpus)",
     .fix = "transformers' generate() with synced_gpus (on by default under DeepSpeed ZeRO-3 or "
            "FSDP with more than one rank) sums a flag over the ranks and reads it after every "
            "token, so that they step together: needed while the ranks hold shards of the "
            "weights; otherwise pass synced_gpus=False",
     .source = "this_peer_finished_flag", .lib = GENERATION},
    {.op = "inside transformers: generate()'s stopping check after every token",
     .fix = "transformers' generate() reads on the host, after each new token, whether every "
            "sequence has finished (a sync a token); no option of generate() skips it: a decoding "
            "loop of your own can check every N tokens",
     .scenario = "device-branch", .source = "this_peer_finished|unfinished_sequences",
     .lib = GENERATION},
    {.op = "inside transformers: generate()'s streamer gets each new token on the host",
     .fix = "transformers' generate() copies every new token to the host for its streamer (a "
            "sync a token): pass no streamer where the tokens are not needed as they come, and "
            "decode generate()'s output once it returns",
     .source = "streamer.put(", .lib = GENERATION},
    {.op = "inside torch.distributions: argument validation (validate_args)",
     .fix = "torch.distributions checks a distribution's arguments and samples on the host: pass "
            "validate_args=False, or call torch.distributions.Distribution."
            "set_default_validate_args(False) once",
     .source = "_is_all_true(valid)|valid.all()", .lib = "torch/distributions/"},
    {.op = "inside torch: clip_grad_norm_'s non-finite check (error_if_nonfinite=True)",
     .fix = "torch's clip_grad_norm_ with error_if_nonfinite=True reads the total norm on the "
            "host at every call: leave it False (the default) and check torch.isfinite(norm) "
            "every N steps",
     .scenario = "log-every", .source = "error_if_nonfinite", .lib = "torch/nn/utils/clip_grad"},
    {.op = "print(tensor) / str(tensor)",
     .fix = "print a value read every N steps (accumulated on the GPU), not the tensor each step",
     .scenario = "log-every", .pyfile = "torch/_tensor_str.py"},
    /* JAX's Python: what the user's line asked of a jax.Array (jax is a framework: a sync under
     * its frames is the user's, not inside a library) */
    {.op = "jax: jax.device_get (values copied to the host)",
     .fix = "fetch only what the host needs, every N steps rather than every step, and several "
            "values at once: one jax.device_get of a tuple (one wait, not one each); keep the "
            "rest on the device (jnp ops)",
     .scenario = "coalesce", .pyfile = "jax/_src/api.py", .pyfunc = "device_get|_device_get"},
    {.op = "jax: block_until_ready", .fix = JAX_WAIT_FIX, .scenario = "small-gemm",
     .pyfile = "jax/_src/api.py|jax/_src/array.py", .pyfunc = "block_until_ready"},
    {.op = "jax: scalar read: x.item()", .fix = JAX_SCALAR_FIX, .scenario = "log-every",
     .pyfile = "jax/_src/numpy/array_methods.py|jax/_src/array.py", .pyfunc = "_item|item"},
    {.op = "jax: Python branch on a device value (if x:, while x:, bool(x))",
     .fix = "keep the decision on the device: jnp.where(cond, a, b), or jax.lax.cond / "
            "jax.lax.while_loop inside jit; or branch on a value read every N steps",
     .scenario = "device-branch", .pyfile = "jax/_src/array.py", .pyfunc = "__bool__"},
    {.op = "jax: scalar read: float(x) / int(x)", .fix = JAX_SCALAR_FIX, .scenario = "log-every",
     .pyfile = "jax/_src/array.py", .pyfunc = "__float__|__int__|__complex__|__index__"},
    {.op = "jax: copy to host: x.tolist()", .fix = JAX_HOST_COPY_FIX, .scenario = "double-buffer",
     .pyfile = "jax/_src/array.py", .pyfunc = "tolist"},
    {.op = "jax: copy to host: np.asarray(x), print(x)", .fix = JAX_HOST_COPY_FIX,
     .scenario = "double-buffer", .pyfile = "jax/_src/array.py", .pyfunc = "__array__|_value"},
    /* jax.Array.block_until_ready is C++: the user's line */
    {.op = "jax: block_until_ready", .fix = JAX_WAIT_FIX, .scenario = "small-gemm",
     .source = ".block_until_ready("},
    /* inside libraries: a native frame of the library's own file */
    {.op = "inside XLA: pinned host memory allocated (HostMemoryAllocate)",
     .fix = "XLA allocates pinned host memory for a transfer: " JAX_HOST_MEMORY_FIX,
     .scenario = "alloc", .api = "cuMemHostAlloc|cuMemAllocHost|cudaHostAlloc|cudaMallocHost",
     .native = "HostMemoryAllocate|HostAllocate|stream_executor", .object = XLA_LIBS},
    {.op = "inside XLA: pinned host memory freed (HostMemoryDeallocate)",
     .fix = "XLA frees pinned host memory (the free waits for the GPU): " JAX_HOST_MEMORY_FIX,
     .scenario = "alloc", .api = "cuMemFreeHost|cudaFreeHost",
     .native = "HostMemoryDeallocate|HostDeallocate|stream_executor", .object = XLA_LIBS},
    {.op = "inside XLA: the host waits for a stream (SynchronizeStream, BlockHostUntilDone)",
     .fix = "XLA's runtime waits on the host for the work of a value the program asked for: "
            JAX_WAIT_FIX,
     .scenario = "small-gemm", .native = "SynchronizeStream|BlockHostUntilDone|BlockHostUntilReady",
     .object = XLA_LIBS},
    {.op = "inside a library: DDP's step timer (CudaTimer::measureDifference)",
     .fix = "DDP times the iterations it samples; model._set_ddp_runtime_logging_sample_rate(N) "
            "makes them rarer",
     .native = "CudaTimer17measureDifference|CudaTimer::measureDifference",
     .object = "libtorch_cuda"},
    {.op = "inside a library: NCCL", .fix = NCCL_FIX, .object = "libnccl"},
    {.op = "inside a library: NCCL", .fix = NCCL_FIX, /* linked into torch 1.x's wheels */
     .native = "ncclGroupEnd|ncclCommInit", .object = "libtorch_cuda"},
    {.op = "inside a library: torch.linalg's error check",
     .fix = "the _ex variant (torch.linalg.inv_ex, cholesky_ex, ...) with its info tensor checked "
            "on the GPU or every N steps",
     .native = "_linalg_check_errors", .object = LIBTORCH},
    {.op = "inside a CUDA library (cuBLAS, cuSOLVER, cuFFT, cuSPARSE, cuDNN)",
     .fix = "the library's handles and workspaces created once, outside the loop; its own syncs "
            "are its own (at start-up and teardown they cost nothing per step)",
     .object = "libcublas|libcusolver|libcufft|libcusparse|libcudnn"},
    /* data-dependent shapes: the output's size is read back to allocate it */
    {.op = SHAPE "boolean mask (x[mask], masked_select)",
     .fix = "torch.where(mask, x, 0) or a masked reduction: a fixed shape, no count read back",
     .scenario = "dynamic-shape", .native = "masked_select|index_Tensor|index_put",
     .object = LIBTORCH},
    {.op = SHAPE "nonzero", .fix = "torch.nonzero_static(x, size=N), or a mask of fixed shape",
     .scenario = "dynamic-shape", .native = "nonzero_cuda|nonzero_out|7nonzero4call|::nonzero(",
     .object = LIBTORCH},
    {.op = SHAPE "unique",
     .fix = "a fixed-size result (torch.bincount(x, minlength=N) for small integer ranges), or "
            "unique once outside the loop",
     .scenario = "dynamic-shape", .native = "unique_cuda|unique_dim|_unique", .object = LIBTORCH},
    {.op = SHAPE "repeat_interleave without output_size",
     .fix = "pass output_size= (the total, known on the host) to repeat_interleave",
     .scenario = "dynamic-shape", .native = "repeat_interleave", .object = LIBTORCH},
    /* a GPU value that decides Python control flow */
    {.op = "Python branch on a GPU value (if t:, while t:, bool(t), if t.any():)",
     .fix = "keep the decision on the GPU (torch.where(cond, a, b)), or branch on a value read "
            "every N steps",
     .scenario = "device-branch", .native = "is_nonzero", .object = LIBTORCH},
    /* copies to the host, named by the source line */
    {.op = "copy to host: .tolist()", .fix = HOST_COPY_FIX, .scenario = "double-buffer",
     .source = ".tolist("},
    {.op = "copy to host: .numpy()", .fix = HOST_COPY_FIX, .scenario = "double-buffer",
     .source = ".numpy("},
    /* scalar reads */
    {.op = "scalar read: .item()", .fix = SCALAR_FIX, .scenario = "log-every",
     .native = "_local_scalar_dense", .object = LIBTORCH, .source = ".item("},
    {.op = "scalar read: float(t) / int(t)", .fix = SCALAR_FIX, .scenario = "log-every",
     .native = "_local_scalar_dense", .object = LIBTORCH, .source = "float(|int(|bool(|complex("},
    {.op = "scalar read (a GPU value to a Python number)", .fix = SCALAR_FIX,
     .scenario = "log-every", .native = "_local_scalar_dense", .object = LIBTORCH},
    {.op = "copy to host: .cpu()", .fix = HOST_COPY_FIX, .scenario = "double-buffer",
     .source = ".cpu(|.to(\"cpu\"|.to('cpu'|device=\"cpu\"|device='cpu'"},
    {.op = "tensor from host data (torch.tensor(list, device=\"cuda\"))",
     .fix = "build it once outside the loop, or from pinned memory with .to(device, "
            "non_blocking=True); constants: torch.full / torch.arange on the GPU",
     .scenario = "small-h2d", .source = "torch.tensor(|torch.as_tensor(|torch.from_numpy("},
    {.op = "copy to host (.cpu(), .to(\"cpu\"), .numpy())", .fix = HOST_COPY_FIX,
     .scenario = "double-buffer", .native = "_to_copy|copy_", .object = LIBTORCH, .copy = "DtoH"},
    {.op = "copy from pageable host memory (.to(\"cuda\"), .cuda())",
     .fix = "pin the source (.pin_memory(), once) and copy with non_blocking=True",
     .scenario = "copy", .native = "_to_copy|copy_", .object = LIBTORCH, .copy = "HtoD"},
    {.op = "copy between host and GPU (.cpu(), .to(...), copy_)", .fix = HOST_COPY_FIX,
     .scenario = "copy", .native = "_to_copy|copy_", .object = LIBTORCH},
    /* explicit syncs */
    {.op = "explicit sync: torch.cuda.synchronize()",
     .fix = "remove it (a readback waits for its own stream anyway), or wait on one stream or "
            "event",
     .scenario = "busy-stream", .native = "device_synchronize", .object = LIBTORCH},
    {.op = "explicit sync: stream.synchronize()",
     .fix = "let the GPU wait (other.wait_stream(s), s.wait_event(e)); block the host only where "
            "it needs the value",
     .scenario = "small-gemm", .native = "CUDAStream11synchronize|CUDAStream::synchronize",
     .object = LIBTORCH},
    {.op = "explicit sync: event.synchronize()",
     .fix = "stream.wait_event(ev) keeps the wait on the GPU; ev.query() asks without blocking",
     .scenario = "small-gemm", .api = "cudaEventSynchronize|cuEventSynchronize",
     .pyfile = "torch/cuda/streams.py"},
    {.op = "explicit device sync from an extension (ctypes, a C/C++ extension)",
     .fix = DEVICE_SYNC_FIX, .scenario = "busy-stream",
     .api = "cuCtxSynchronize|cudaDeviceSynchronize|cudaThreadSynchronize",
     .object = "libffi|_ctypes"},
    /* the allocator */
    {.op = "allocator: torch.cuda.empty_cache()", .fix = EMPTY_CACHE_FIX, .scenario = "alloc",
     .api = FREE_API, .native = "emptyCache|empty_cache", .object = LIBTORCH},
    {.op = "allocator: torch.cuda.empty_cache()", .fix = EMPTY_CACHE_FIX, .scenario = "alloc",
     .api = FREE_API, .source = "empty_cache("},
    {.op = "allocator: the caching allocator gave memory back (cudaFree)",
     .fix = "keep peak memory steady (allocate once, reuse); "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True avoids free + malloc when "
            "fragmented",
     .scenario = "alloc", .api = FREE_API, .object = "libc10_cuda"},
    /* what the API alone says (no library's name: said in CUDA's terms) */
    {.op = "explicit sync: device (cudaDeviceSynchronize, cuCtxSynchronize)",
     .fix = DEVICE_SYNC_FIX, .scenario = "busy-stream",
     .api = "cuCtxSynchronize|cudaDeviceSynchronize|cudaThreadSynchronize"},
    {.op = "explicit sync: stream (cudaStreamSynchronize)",
     .fix = "let the GPU wait (cudaStreamWaitEvent); block the host only where it needs the "
            "value",
     .scenario = "small-gemm", .api = "StreamSynchronize"},
    {.op = "explicit sync: event (cudaEventSynchronize)",
     .fix = "let the GPU wait (cudaStreamWaitEvent); cudaEventQuery asks without blocking; block "
            "the host only where it needs the value",
     .scenario = "small-gemm", .api = "cudaEventSynchronize|cuEventSynchronize"},
    {.op = "allocator: pinned host memory freed (cudaFreeHost)",
     .fix = "allocate pinned host buffers once and reuse them: a free of pinned memory waits for "
            "the GPU",
     .scenario = "alloc", .api = "cudaFreeHost|cuMemFreeHost"},
    {.op = "allocator: cudaFree", .fix = "allocate once and reuse, or cudaFreeAsync (stream-ordered)",
     .scenario = "alloc", .api = FREE_API},
    {.op = "async copy with pageable host memory (it blocks)",
     .fix = "pin the host buffer (cudaHostAlloc, .pin_memory()) so the copy runs asynchronously",
     .scenario = "copy",
     .api = "MemcpyAsync|MemcpyDtoHAsync|MemcpyHtoDAsync|Memcpy2DAsync|Memcpy3DAsync"},
    {.op = "blocking copy (cudaMemcpy)",
     .fix = "cudaMemcpyAsync with pinned host memory on the work's stream, waited for by an event",
     .scenario = "copy", .api = "cudaMemcpy|cuMemcpy"},
    {.op = "blocking memset (cudaMemset)", .fix = "cudaMemsetAsync on the work's stream",
     .api = "cudaMemset|cuMemset"},
    {.op = NULL},
};
/* clang-format on */

/* Does any alternative of `alts` ("a|b|c") occur in s? */
int sb_audit_alt_in(const char *alts, const char *s)
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

/* Is s one of the alternatives of `alts`, whole? */
int sb_audit_alt_is(const char *alts, const char *s)
{
    for (const char *a = alts; s && *a;) {
        size_t n = strcspn(a, "|");
        if (strlen(s) == n && !strncmp(s, a, n))
            return 1;
        a += n + (a[n] == '|');
    }
    return 0;
}

/* Is any alternative of `alts` whole path components of path ("torch/_tensor_str.py" in
 * ".../site-packages/torch/_tensor_str.py", not in ".../mytorch/_tensor_str.py")? */
static int any_components(const char *alts, const char *path)
{
    for (const char *a = alts; path && *a;) {
        size_t n = strcspn(a, "|");
        for (const char *p = path; n && (p = strchr(p, a[0])) != NULL; p++)
            if (!strncmp(p, a, n) && (p == path || p[-1] == '/') &&
                (a[n - 1] == '/' || p[n] == '\0' || p[n] == '/'))
                return 1;
        a += n + (a[n] == '|');
    }
    return 0;
}

static const char *basename_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* A frame of the rule's library (its file name begins with one of `object`) whose symbol holds
 * one of `native` (any frame of the library when the rule names no symbol). A symbol without
 * its library matches nothing: the same name in a stranger's library is not the rule's. */
static int native_has(const sb_audit_stack *s, const sb_audit_rule *r)
{
    for (int i = 0; s && r->object && i < s->nframes; i++)
        if (any_prefix(r->object, basename_of(s->frames[i].obj)) &&
            (!r->native || sb_audit_alt_in(r->native, s->frames[i].sym)))
            return 1;
    return 0;
}

/* A Python frame of the rule's package file (`pyfile`), in one of its functions (`pyfunc`) when
 * the rule names them. */
static int pyfile_has(const sb_audit_pystack *s, const sb_audit_rule *r)
{
    for (int i = 0; s && r->pyfile && i < s->nframes; i++)
        if (any_components(r->pyfile, s->frames[i].file) &&
            (!r->pyfunc || sb_audit_alt_is(r->pyfunc, s->frames[i].func)))
            return 1;
    return 0;
}

/* The text of the lines that made the call: the innermost frame's, and the library's frame's
 * (a library calling torch), else the user's line (calling torch, or the innermost itself). */
static int source_has(const sb_audit_call_info *ci, const char *alts)
{
    const sb_audit_made *m = ci->made;
    if (m && m->via && sb_audit_alt_in(alts, m->via_source))
        return 1;
    return sb_audit_alt_in(alts, m && m->lib ? m->lib_source : ci->source);
}

/* The file of the frame that made the call (the library's, else the innermost) from its
 * installed package on; NULL without Python or outside an installed package. */
static const char *maker_file(const sb_audit_call_info *ci)
{
    const sb_audit_made *m = ci->made; /* NULL: a call not attributed (no Python frames) */
    const sb_audit_pyframe *f = m && m->lib ? m->lib : m && m->via ? m->via : ci->pyframe;
    return f ? sb_audit_py_in_package(f->file) : NULL;
}

int sb_audit_rule_holds(const sb_audit_rule *r, const sb_audit_proc *p, const sb_audit_call *c,
                        const sb_audit_call_info *ci)
{
    char api[128];
    sb_audit_base_name(c->api, api, sizeof api);
    if ((r->api && !sb_audit_alt_in(r->api, api)) ||
        (r->copy && !sb_audit_alt_in(r->copy, c->copy)) ||
        (r->source && !source_has(ci, r->source)) ||
        (r->lib && !any_prefix(r->lib, maker_file(ci))))
        return 0;
    const sb_audit_stack *st = c->stack >= 0 ? sb_audit_find_stack(p, c->stack) : NULL;
    int64_t py_id = sb_audit_call_py(p, c, ci);
    const sb_audit_pystack *py = py_id >= 0 ? sb_audit_find_pystack(p, py_id) : NULL;
    return (!(r->native || r->object) || native_has(st, r)) &&
           (!(r->pyfile || r->pyfunc) || pyfile_has(py, r));
}

const sb_audit_rule *sb_audit_rule_for(const sb_audit_proc *p, const sb_audit_call *c,
                                       const sb_audit_call_info *ci)
{
    for (const sb_audit_rule *r = sb_audit_rules; r->op; r++)
        if (sb_audit_rule_holds(r, p, c, ci))
            return r;
    return NULL;
}

/* A sync of a library's own code that no framework row names, or whose row's line changed:
 * where it is and that no option in the user's code is known to remove it, with the sync-free
 * way as a hint for the library's authors. */
static const char *unknown_fix(const sb_audit_made *m, const sb_audit_rule *r, char *buf, size_t n)
{
    const char *pkg = m->library[0] ? m->library : "torch";
    const sb_audit_pyframe *f = m->lib ? m->lib : m->via;
    char why[512];
    if (m->fw_changed)
        sb_audit_fmt(why, sizeof why,
                     "the line differs from the one syncbench checked on %s %s (row %s): not "
                     "known to syncbench",
                     m->fw_changed->package, m->fw_changed->versions, m->fw_changed->id);
    else
        sb_audit_fmt(why, sizeof why, "not in syncbench's framework table (docs/frameworks.md)");
    sb_audit_fmt(buf, n, "inside %s (%s): %s; no option in your code is known to remove it%s%s",
                 pkg, f ? f->func : "?", why, r ? "; for the library's authors: " : "",
                 r ? r->fix : "");
    return buf;
}

int sb_audit_name_call(sb_strpool *strs, const sb_audit_call_info *ci, sb_audit_made *m)
{
    const sb_audit_rule *r = ci->rule;
    const char *op = r ? r->op : NULL, *fix = r ? r->fix : "";
    char op_buf[512], fix_buf[2048];
    if (m->fw) { /* a framework row: what it is, the option in the user's code, its caveat */
        sb_audit_fmt(op_buf, sizeof op_buf, "inside %s: %s", m->fw->package, m->fw->what);
        op = op_buf;
        sb_audit_fmt(fix_buf, sizeof fix_buf, "%s%s%s", m->fw->fix,
                     m->fw->caveat && m->fw->caveat[0] ? " (caveat: " : "",
                     m->fw->caveat && m->fw->caveat[0] ? m->fw->caveat : "");
        if (m->fw->caveat && m->fw->caveat[0])
            strncat(fix_buf, ")", sizeof fix_buf - strlen(fix_buf) - 1);
        fix = fix_buf;
    } else if ((m->lib && !(r && r->lib)) || m->fw_changed) {
        if (!r) {
            sb_audit_fmt(op_buf, sizeof op_buf, "inside %s: an operation no rule knows",
                         m->library[0] ? m->library : "torch");
            op = op_buf;
        }
        fix = unknown_fix(m, r, fix_buf, sizeof fix_buf);
    }
    m->op = op ? sb_audit_intern(strs, op) : NULL;
    m->fix = sb_audit_intern(strs, fix);
    return (op && !m->op) || !m->fix ? -1 : 0;
}
