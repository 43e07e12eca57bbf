"""Python's hand-offs through libsyncbench_waits.so, run by tests/cli/test_waits.py with the
library in LD_PRELOAD: it starts the library (ctypes, as the injection library would), then

  queue  a producer thread sleeps 20 ms and puts an item on a queue.Queue whose get() the main
         thread sleeps in (CPython's locks are POSIX semaphores: a "sem" hand-off);
  gil    two CPU-busy threads contend for the GIL for 0.2 s (its condition variable: no hand-off
         unless SYNCBENCH_WAITS_KEEP_GIL=1 turns the rule off)

and prints one JSON object: the threads' native ids and the hand-offs recorded meanwhile."""
import ctypes
import json
import queue
import sys
import threading
import time


class Handoff(ctypes.Structure):
    """sbw_handoff (waits/waits.h)"""
    _fields_ = [("start_ns", ctypes.c_longlong), ("end_ns", ctypes.c_longlong),
                ("signal_ns", ctypes.c_longlong), ("waiter_tid", ctypes.c_int),
                ("signaller_tid", ctypes.c_int), ("kind", ctypes.c_int),
                ("waiter_py", ctypes.c_long)]


LIB = ctypes.CDLL(None)
LIB.sbw_drain.restype = ctypes.c_size_t
LIB.sbw_drain.argtypes = [ctypes.POINTER(Handoff), ctypes.c_size_t]
KINDS = {1: "cond", 2: "sem", 3: "futex"}


def drain():
    batch = (Handoff * 1024)()
    out = []
    while True:
        n = LIB.sbw_drain(batch, len(batch))
        out += [{"tid": h.waiter_tid, "by": h.signaller_tid, "start": h.start_ns,
                 "end": h.end_ns, "at": h.signal_ns, "obj": KINDS.get(h.kind, "?")}
                for h in batch[:n]]
        if n < len(batch):
            return out


def queue_handoff():
    q = queue.Queue()
    producer_id = []

    def producer():
        producer_id.append(threading.get_native_id())
        time.sleep(0.02)
        q.put(1)

    t = threading.Thread(target=producer)
    t.start()
    drain()  # the thread's start: the main thread waited for it to run
    q.get()
    wakes = drain()
    t.join()
    return {"main": threading.get_native_id(), "producer": producer_id[0], "wakes": wakes}


def gil_contention():
    deadline = time.monotonic() + 0.2

    def spin():
        n = 0
        while time.monotonic() < deadline:
            n += 1

    threads = [threading.Thread(target=spin) for _ in range(2)]
    drain()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"main": threading.get_native_id(),
            "spinners": [t.native_id for t in threads], "wakes": drain()}


def main():
    if LIB.sbw_start() != 0:
        sys.exit("py_handoffs: sbw_start failed")
    out = queue_handoff() if sys.argv[1] == "queue" else gil_contention()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
