"""scope="task": a block that counts the calls of one asyncio task only. The native blocks count
per thread, and an event loop runs many tasks on its thread, one step at a time; so a task's
block is a run of native blocks of the thread, one per step of the task: open while the task
runs, closed while the loop runs anything else. The steps are seen where asyncio's event loop
runs each callback (asyncio.events.Handle._run, wrapped while a task block is open): a
callback of the block's task (its step or wake-up, whose __self__ is the task) opens the next
native block; any other callback closes it first. That needs asyncio's own loops
(BaseEventLoop: the default, selector and proactor loops); another loop (uvloop) is refused."""
import asyncio
import asyncio.events
import threading

_lock = threading.Lock()
_open = {}  # thread id -> {task -> [Syncs] open in it}: each loop sees its own thread's
_orig_run = None


def _owner(handle):
    return getattr(getattr(handle, "_callback", None), "__self__", None)


def _run(self):
    here = _open.get(threading.get_ident()) if _open else None
    if not here:
        return _orig_run(self)
    task = _owner(self)
    for t, blocks in list(here.items()):
        for b in list(blocks):
            if t is task:
                b._resume()
            else:
                b._pause()
    try:
        return _orig_run(self)
    finally:
        for b in list(here.get(task, ())) if task is not None else ():
            b._pause()


def current(where):
    """The task the block is opened in; ValueError/RuntimeError when it cannot be counted."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(f"syncbench.{where}: scope='task' needs a running asyncio task (open "
                           f"the block inside a coroutine)") from None
    task = asyncio.current_task(loop)
    if task is None:
        raise RuntimeError(f"syncbench.{where}: scope='task' needs a running asyncio task")
    if not isinstance(loop, asyncio.base_events.BaseEventLoop):
        raise RuntimeError(f"syncbench.{where}: scope='task' needs asyncio's own event loop "
                           f"(it sees a task's steps there), not {type(loop).__name__}; use "
                           f"scope='thread'")
    return task


def watch(syncs):
    global _orig_run
    with _lock:
        if _orig_run is None:
            _orig_run = asyncio.events.Handle._run
            asyncio.events.Handle._run = _run
        here = _open.setdefault(threading.get_ident(), {})
        here.setdefault(syncs._task, []).append(syncs)


def unwatch(syncs):
    with _lock:
        here = _open.get(threading.get_ident(), {})
        blocks = here.get(syncs._task)
        if blocks and syncs in blocks:
            blocks.remove(syncs)
            if not blocks:
                del here[syncs._task]
            if not here:
                _open.pop(threading.get_ident(), None)
