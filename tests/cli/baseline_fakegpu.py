"""A stand-in for CUDA under the sync baseline's GPU tests (tests/gpu/test_baseline_*.py), for
their dry run without a GPU (tests/cli/test_baseline_dryrun.py): the modules written into a
folder that SYNCBENCH_BASELINE_DRYRUN names.

- fakegpu.py: each blocking call the stand-in torch makes, recorded as the injection library
  records it (the calling thread, its open NVTX ranges, its Python stack with torch's own
  C++ frames left out, a native frame of libtorch that names the operation), written to
  $SYNCBENCH_AUDIT_DIR/proc-PID.jsonl at exit; and, loaded into syncbench._native (on import,
  or as a pytest plugin: -p fakegpu), the package's native blocks over the same calls.
- site-packages/torch, site-packages/transformers: what tests/audit/baseline_loop.py calls of
  them, making the syncs the real ones make at the same places: .item() and int(t) (a scalar
  read), .to("cuda") of a host tensor (a copy from pageable memory), torch.cuda.synchronize(),
  GradScaler.step()'s read of found_inf (inside torch's Python), generate()'s special tokens
  once a call and its stop check each token (inside transformers' Python).

No tensor holds data; only the calls are real."""
import os
import pathlib

FAKEGPU = r'''
import atexit, json, os, threading, time, traceback

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_OPS = os.path.join(HERE, "site-packages", "torch", "__init__.py")
LIBTORCH = "/usr/lib/x86_64-linux-gnu/libtorch_cuda.so"
NATIVE = {
    "item": "at::native::_local_scalar_dense_cuda(at::Tensor const&)",
    "copy": "at::native::copy_(at::Tensor&, at::Tensor const&, bool)",
    "synchronize": "c10::cuda::device_synchronize()",
    "branch": "at::native::is_nonzero(at::Tensor const&)",
}
_lock = threading.RLock()
_py, _native, _calls, _ranges = {}, {}, [], []
_tls = threading.local()
_next = [0]
_T0 = time.monotonic_ns()


def _now():
    return time.monotonic_ns() - _T0 + 1000


def _open():
    if not hasattr(_tls, "ranges"):
        _tls.ranges = []
    return _tls.ranges


def push(name):
    with _lock:
        _next[0] += 1
        _open().append((_next[0], name, _now()))


def pop():
    rid, name, start = _open().pop()
    with _lock:
        _ranges.append({"t": "range", "tid": threading.get_native_id(), "id": rid,
                        "name": name, "start": start, "end": _now(),
                        "depth": len(_open())})


def _frames():
    """The Python stack, innermost first, as the library walks it: this module's frames and
    torch's C++ stand-ins (torch/__init__.py) left out, torch's Python (grad_scaler.py) and
    transformers' kept."""
    out = []
    for f in reversed(traceback.extract_stack()[:-2]):
        if f.filename in (__file__, TORCH_OPS) or f.filename.endswith("fakegpu.py"):
            continue
        out.append([f.filename, f.name, f.lineno])
    return out


def sync(op, api="cudaStreamSynchronize", **extra):
    """One blocking call of op (a key of NATIVE), made where the caller's caller is."""
    frames = _frames()
    with _lock:
        py = _py.setdefault(json.dumps(frames), len(_py) + 1)
        st = _native.setdefault(op, len(_native) + 1)
        t = _now()
        call = {"t": "call", "api": api, "dom": "rt", "tid": threading.get_native_id(),
                "ctx": 1, "corr": len(_calls) + 1, "start": t, "end": t + 2000,
                "ranges": [[i, n] for i, n, _ in _open()], "stack": st, "py": py, **extra}
        _calls.append((call, frames))
        _block_add(call, frames)


def _stack_lines(ops, pys):
    lines = [{"t": "stack", "id": i, "frames": [[LIBTORCH, NATIVE[op], 4660, 140000000000000]]}
             for op, i in _native.items() if i in ops]
    lines += [{"t": "pystack", "id": i, "frames": json.loads(k)}
              for k, i in _py.items() if i in pys]
    return lines


def _proc(cmd):
    return {"t": "proc", "v": 1, "pid": os.getpid(), "ppid": os.getppid(), "rank": -1,
            "local_rank": -1, "cmd": cmd, "clock_ns": 0, "mono_ns": 0, "mode": "count",
            "kernels": 0, "symsize": 1}


END = {"t": "end", "clock_ns": 10**15, "mono_ns": 10**15, "why": "exit", "dropped": 0}


def _write():
    folder = os.environ.get("SYNCBENCH_AUDIT_DIR")
    if not folder:
        return
    calls = [c for c, _ in _calls]
    lines = [_proc("python3 baseline_loop.py")]
    lines += _stack_lines({c["stack"] for c in calls}, {c["py"] for c in calls})
    lines += _ranges + calls + [END]
    with open(os.path.join(folder, f"proc-{os.getpid()}.jsonl"), "w") as f:
        f.write("".join(json.dumps(o, separators=(",", ":")) + "\n" for o in lines))


atexit.register(_write)

# ---- syncbench._native's blocks over the same calls ----
_blocks, _next_block = {}, [0]


def _block_add(call, frames):
    me = threading.get_ident()
    for b in _blocks.values():
        if b["all"] or b["ident"] == me:
            b["counts"][1] += 1
            b["calls"].append(call)


def begin(all_threads):
    with _lock:
        _next_block[0] += 1
        _blocks[_next_block[0]] = {"all": all_threads, "ident": threading.get_ident(),
                                   "counts": [0, 0, 0], "calls": []}
        return _next_block[0]


def _mine(b):
    blk = _blocks.get(b)
    if blk is None or not (blk["all"] or blk["ident"] == threading.get_ident()):
        raise RuntimeError("syncbench: this block is closed or belongs to another thread")
    return blk


def counts(b):
    with _lock:
        return list(_mine(b)["counts"])


def end(b):
    with _lock:
        blk = _mine(b)
        del _blocks[b]
        calls = blk["calls"]
        if not calls:
            return blk["counts"][1], list(blk["counts"]), None
        lines = [_proc("(a syncbench block)")]
        lines += _stack_lines({c["stack"] for c in calls}, {c["py"] for c in calls})
        lines += calls + [END]
    text = "".join(json.dumps(o, separators=(",", ":")) + "\n" for o in lines)
    return blk["counts"][1], list(blk["counts"]), text.encode()


class Classes:
    n, names, blocking = 3, ["none", "sync-stream", "poll"], [False, True, False]


def _install():
    try:
        from syncbench import _native
    except ImportError:
        return
    _native.classes = lambda: Classes
    _native.attach = lambda: None
    _native._lib_path = os.environ.get("SYNCBENCH_AUDIT_LIB")  # the analyzer beside it
    _native.begin, _native.counts, _native.end = begin, counts, end


_install()
'''

TORCH = r'''
"""A stand-in for torch: what tests/audit/baseline_loop.py calls (module docstring of
tests/cli/baseline_fakegpu.py)."""
import contextlib
import fakegpu
from . import amp, cuda, nn, optim, utils  # noqa: F401

float16 = "float16"


class Tensor:
    def __init__(self, shape, device="cpu"):
        self.shape, self.device = tuple(shape), device

    def _like(self, shape=None):
        return Tensor(self.shape if shape is None else shape, self.device)

    def to(self, device, non_blocking=False):
        if self.device == "cpu" and device != "cpu":
            fakegpu.sync("copy", api="cudaMemcpyAsync", copy="HtoD", host="pageable")
        return Tensor(self.shape, device)

    def cuda(self):
        return self.to("cuda")

    def item(self):
        if self.device != "cpu":
            fakegpu.sync("item")
        return 0.5

    def __int__(self):
        if self.device != "cpu":
            fakegpu.sync("item")
        return 3

    def __bool__(self):
        if self.device != "cpu":
            fakegpu.sync("branch")
        return False

    def __eq__(self, other):
        return self._like(())

    __hash__ = object.__hash__

    def __getitem__(self, key):
        return self._like(())

    def sum(self):
        return self._like(())

    def max(self):
        return self._like(())

    def abs(self):
        return self._like()

    def detach(self):
        return self._like()

    def backward(self):
        pass


def manual_seed(seed):
    pass


def randn(*shape):
    return Tensor(shape)


def randint(low, high, shape, device="cpu"):
    return Tensor(shape, device)


def ones(*shape, device="cpu"):
    return Tensor(shape, device)


def ones_like(t):
    return t._like()


def cat(ts, dim=-1):
    return Tensor((ts[0].shape[0], sum(t.shape[1] for t in ts)), ts[0].device)


def tensor(value, device="cpu"):
    t = Tensor((), "cpu")
    return t.to(device) if device != "cpu" else t


no_grad = contextlib.nullcontext


def autocast(device, dtype=None):
    return contextlib.nullcontext()
'''

TORCH_CUDA = r'''
import contextlib
import fakegpu


def is_available():
    return True


def synchronize():
    fakegpu.sync("synchronize", api="cudaDeviceSynchronize")


class nvtx:
    range_push = staticmethod(fakegpu.push)

    @staticmethod
    def range_pop():
        fakegpu.pop()

    @staticmethod
    @contextlib.contextmanager
    def range(name):
        fakegpu.push(name)
        try:
            yield
        finally:
            fakegpu.pop()
'''

TORCH_NN = r'''
import torch
from . import functional  # noqa: F401


class Module:
    def cuda(self):
        return self

    def eval(self):
        return self

    def parameters(self):
        return [torch.Tensor((1,), "cuda")]


class Linear(Module):
    def __init__(self, a, b):
        self.out = b

    def __call__(self, x):
        return torch.Tensor((x.shape[0], self.out), x.device)


class LayerNorm(Module):
    def __init__(self, width):
        pass

    def __call__(self, x):
        return x._like()


class GELU(LayerNorm):
    def __init__(self):
        pass


class Sequential(Module):
    def __init__(self, *layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
'''

TORCH_FUNCTIONAL = r'''
def cross_entropy(out, y):
    return out._like(())
'''

TORCH_OPTIM = r'''
class AdamW:
    def __init__(self, params, lr=1e-3):
        self.params = params

    def zero_grad(self, set_to_none=True):
        pass

    def step(self):
        pass
'''

TORCH_AMP = r'''
from .grad_scaler import GradScaler  # noqa: F401
'''

GRAD_SCALER = r'''
import torch


class GradScaler:
    def __init__(self, device="cuda"):
        self.device = device

    def scale(self, loss):
        return loss._like()

    def _maybe_opt_step(self, optimizer, found_inf):
        if not sum(v.item() for v in found_inf):  # torch reads found_inf on the host here
            optimizer.step()

    def step(self, optimizer):
        return self._maybe_opt_step(optimizer, [torch.Tensor((), self.device)])

    def update(self):
        pass
'''

TORCH_UTILS = r'''
from . import data  # noqa: F401
'''

TORCH_DATA = r'''
import torch


class TensorDataset:
    def __init__(self, *tensors):
        self.tensors = tensors


class DataLoader:
    def __init__(self, dataset, batch_size=1):
        self.dataset, self.batch_size = dataset, batch_size

    def __iter__(self):
        n = self.dataset.tensors[0].shape[0]
        for _ in range(0, n, self.batch_size):
            yield tuple(torch.Tensor((self.batch_size,) + t.shape[1:]) for t in
                        self.dataset.tensors)
'''

TRANSFORMERS = r'''
from .models import GPT2Config, GPT2LMHeadModel  # noqa: F401
'''

MODELS = r'''
from .generation.utils import GenerationMixin


class GPT2Config:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class GPT2LMHeadModel(GenerationMixin):
    def __init__(self, config):
        self.config = config

    def cuda(self):
        return self

    def eval(self):
        return self
'''

GENERATION = r'''
import torch


class GenerationMixin:
    def generate(self, ids, attention_mask=None, max_new_tokens=1, min_new_tokens=0,
                 do_sample=False):
        eos = torch.tensor(self.config.eos_token_id, device=ids.device)  # special tokens
        return self._sample(ids, max_new_tokens, eos)

    def _sample(self, ids, new, eos):
        unfinished = torch.ones(ids.shape[0], device=ids.device)
        for _ in range(new):
            ids = torch.cat([ids, torch.Tensor((ids.shape[0], 1), ids.device)])
            if self._has_unfinished_sequences(unfinished.max() == 0):
                break
        return ids

    def _has_unfinished_sequences(self, finished):
        if finished:  # each token: whether every sequence finished, read on the host
            return True
        return False
'''


def write(folder):
    """The stand-ins under folder (fakegpu.py, site-packages/torch, transformers): folder."""
    folder = pathlib.Path(folder)
    sp = folder / "site-packages"
    files = {
        "fakegpu.py": FAKEGPU,
        "site-packages/torch/__init__.py": TORCH,
        "site-packages/torch/cuda.py": TORCH_CUDA,
        "site-packages/torch/nn/__init__.py": TORCH_NN,
        "site-packages/torch/nn/functional.py": TORCH_FUNCTIONAL,
        "site-packages/torch/optim.py": TORCH_OPTIM,
        "site-packages/torch/amp/__init__.py": TORCH_AMP,
        "site-packages/torch/amp/grad_scaler.py": GRAD_SCALER,
        "site-packages/torch/utils/__init__.py": TORCH_UTILS,
        "site-packages/torch/utils/data.py": TORCH_DATA,
        "site-packages/transformers/__init__.py": TRANSFORMERS,
        "site-packages/transformers/models.py": MODELS,
        "site-packages/transformers/generation/__init__.py": "",
        "site-packages/transformers/generation/utils.py": GENERATION,
    }
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip("\n"))
    assert sp.is_dir()
    return folder


if __name__ == "__main__":  # for a look by hand: python3 baseline_fakegpu.py DIR
    import sys
    print(write(sys.argv[1] if len(sys.argv) > 1 else os.getcwd()))
