"""A Python thread woken by threads, under `syncbench audit` with the injection library's CPU
stand-ins (tests/cli/test_waits.py): it initializes the injection library named by
CUDA_INJECTION64_PATH itself, as the CUDA driver would (fake CUPTI records no CUDA call), then
its main thread sleeps twice in a wait made through ctypes (the GIL released, as a runtime's
wait is):

  sem    sem_wait, posted by a thread without Python (glibc's SIGEV_THREAD timer thread calls
         sem_post itself): a "sem" hand-off from a thread without Python;
  futex  syscall(SYS_futex, FUTEX_WAIT), woken by a Python thread's FUTEX_WAKE after 20 ms: a
         "futex" hand-off.

Each wake record's "py" is the main thread's Python stack at the line marked WAIT-SEM or
WAIT-FUTEX. Prints {"main": TID} on stdout."""
import ctypes
import os
import sys
import threading
import time

SYS_FUTEX = {"x86_64": 202, "aarch64": 98}[os.uname().machine]
FUTEX_WAIT_PRIVATE, FUTEX_WAKE_PRIVATE = 128, 129
SIGEV_THREAD = 2
CLOCK_MONOTONIC = 1

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


class SigEvent(ctypes.Structure):
    """struct sigevent with SIGEV_THREAD (Linux, 64-bit): 64 bytes"""
    _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int), ("notify", ctypes.c_int),
                ("function", ctypes.c_void_p), ("attribute", ctypes.c_void_p),
                ("pad", ctypes.c_char * 32)]


class ITimerSpec(ctypes.Structure):
    _fields_ = [("interval_s", ctypes.c_long), ("interval_ns", ctypes.c_long),
                ("value_s", ctypes.c_long), ("value_ns", ctypes.c_long)]


def start_injection():
    lib = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"])
    lib.InitializeInjection()


def sem_from_a_thread_without_python():
    """A timer whose thread (glibc's, no Python) calls sem_post(sem) in 20 ms."""
    sem = ctypes.create_string_buffer(64)  # sem_t: 32 bytes on 64-bit Linux
    assert libc.sem_init(sem, 0, 0) == 0
    ev = SigEvent(value=ctypes.addressof(sem), notify=SIGEV_THREAD,
                  function=ctypes.cast(libc.sem_post, ctypes.c_void_p).value)
    timer = ctypes.c_void_p()
    assert libc.timer_create(CLOCK_MONOTONIC, ctypes.byref(ev), ctypes.byref(timer)) == 0
    assert libc.timer_settime(timer, 0, ctypes.byref(ITimerSpec(value_ns=20_000_000)), None) == 0
    libc.sem_wait(sem)  # WAIT-SEM
    libc.timer_delete(timer)


def futex_from_a_python_thread():
    word = ctypes.c_int(0)

    def wake():
        time.sleep(0.02)
        word.value = 1
        libc.syscall(SYS_FUTEX, ctypes.byref(word), FUTEX_WAKE_PRIVATE, 1, None, None, 0)

    t = threading.Thread(target=wake)
    t.start()
    while word.value == 0:
        libc.syscall(SYS_FUTEX, ctypes.byref(word), FUTEX_WAIT_PRIVATE, 0, None, None, 0)  # WAIT-FUTEX
    t.join()


def main():
    start_injection()
    sem_from_a_thread_without_python()
    futex_from_a_python_thread()
    print('{"main": %d}' % threading.get_native_id())
    sys.stdout.flush()


if __name__ == "__main__":
    main()
