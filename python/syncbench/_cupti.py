"""The CUPTI that syncbench's audit library needs (the libcupti.so.N of its dynamic section),
found where the user has it and loaded (RTLD_GLOBAL) before the library, so that the library's
own load takes that copy. The launcher's search (src/cmd/cupti_find.c), in the same order:

1. already loaded in this process (by PyTorch, or by `syncbench audit`): that one;
2. $SYNCBENCH_CUPTI, a libcupti.so.N file: only that one;
3. the folders of LD_LIBRARY_PATH;
4. the CUDA toolkit: extras/CUPTI/lib64 and lib64 under $CUDA_HOME, then under /usr/local/cuda
   (skipped with SYNCBENCH_NO_TOOLKIT=1);
5. NVIDIA's CUDA wheels of this Python: nvidia/cu13/lib (CUDA 13) and nvidia/cuda_cupti/lib
   (CUDA 12's layout) under each site-packages folder of sys.path;
6. the loader's own search when the library is loaded (its runpath, ld.so.cache; skipped with
   SYNCBENCH_NO_TOOLKIT=1)."""
import ctypes
import os
import re
import struct
import sys

from ._text import escape

TOOLKIT_DIRS = ("extras/CUPTI/lib64", "lib64")
WHEEL_DIRS = ("nvidia/cu13/lib", "nvidia/cuda_cupti/lib")
DT_NEEDED, DT_SONAME = 1, 14


def elf_names(path):
    """(the DT_NEEDED names, the DT_SONAME or "") of an ELF64 little-endian shared library;
    None when it is not one."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
                return None
            shoff, = struct.unpack_from("<Q", head, 0x28)
            shentsize, shnum = struct.unpack_from("<HH", head, 0x3A)
            if shentsize != 64:
                return None
            f.seek(shoff)
            table = f.read(64 * shnum)
            sections = [struct.unpack_from("<IIQQQQIIQQ", table, 64 * i)
                        for i in range(len(table) // 64)]
            for _, kind, _, _, offset, size, link, _, _, _ in sections:
                if kind != 6 or link >= len(sections):  # SHT_DYNAMIC
                    continue
                f.seek(offset)
                dyn = f.read(min(size, 1 << 20))
                str_offset, str_size = sections[link][4], sections[link][5]
                f.seek(str_offset)
                strs = f.read(min(str_size, 16 << 20))

                def text(i):
                    return strs[i:strs.index(b"\0", i)].decode(errors="surrogateescape")
                needed, soname = [], ""
                for i in range(len(dyn) // 16):
                    tag, val = struct.unpack_from("<qQ", dyn, 16 * i)
                    if tag == 0:
                        break
                    if tag in (DT_NEEDED, DT_SONAME) and val < len(strs):
                        if tag == DT_NEEDED:
                            needed.append(text(val))
                        else:
                            soname = text(val)
                return needed, soname
    except (OSError, ValueError, struct.error):
        return None
    return None


def needed_cupti(lib):
    """The libcupti.so.N lib needs, or None."""
    names = elf_names(lib)
    return next((n for n in names[0] if n.startswith("libcupti.so")), None) if names else None


def no_toolkit():
    return os.environ.get("SYNCBENCH_NO_TOOLKIT") == "1"


def site_folders():
    """This Python's site-packages folders (and any folder of sys.path that holds nvidia/)."""
    out = []
    for entry in sys.path:
        if (entry and entry not in out and os.path.isdir(entry) and
                (os.path.basename(entry) in ("site-packages", "dist-packages") or
                 os.path.isdir(os.path.join(entry, "nvidia")))):
            out.append(entry)
    return out


def _other_major(folder, soname):
    """Another major of the library in folder ("libcupti.so.12"), or None."""
    prefix = soname[:soname.index(".so.") + 4]
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    return next((n for n in names if n != soname and re.fullmatch(re.escape(prefix) + r"\d+", n)),
                None)


def _loaded(soname):
    """The path of soname where it is loaded in this process already, else None."""
    try:
        ctypes.CDLL(soname, mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
    except OSError:
        return None
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split(None, 5)[-1].strip()
                if os.path.basename(path).startswith(soname[:soname.index(".so.") + 4]):
                    return path
    except OSError:
        pass
    return soname


def find(soname):
    """(path, where) of the first place above that holds soname; (None, what was looked in, as
    one escaped line, with another major seen on the way)."""
    looked, other = [], []

    def look(folder):
        path = os.path.join(folder, soname)
        if os.access(path, os.R_OK):
            return path
        seen = _other_major(folder, soname)
        if seen and not other:
            other.append(f"there: {seen} in {escape(folder)}")
        return None

    ld = os.environ.get("LD_LIBRARY_PATH", "")
    for folder in filter(None, re.split("[:;]", ld)):
        if look(folder):
            return look(folder), "LD_LIBRARY_PATH"
    looked.append("LD_LIBRARY_PATH" + ("" if ld else " (unset)"))
    if no_toolkit():
        looked.append("the toolkit (skipped: SYNCBENCH_NO_TOOLKIT=1)")
    else:
        home = os.environ.get("CUDA_HOME")
        roots = [r for r in (home, "/usr/local/cuda") if r]
        folders = [os.path.join(r, d) for i, r in enumerate(roots) if r not in roots[:i]
                   for d in TOOLKIT_DIRS]
        for folder in folders:
            if look(folder):
                return look(folder), "the toolkit"
        looked.append("the toolkit's " + ", ".join(escape(x) for x in folders))
    sites = site_folders()
    for site in sites:
        for d in WHEEL_DIRS:
            if look(os.path.join(site, d)):
                return look(os.path.join(site, d)), "a wheel"
    looked.append(f"the wheels' {' and '.join(WHEEL_DIRS)} under "
                  + (", ".join(escape(s) for s in sites) or "no site-packages folder of sys.path"))
    looked += other
    looked.append("the loader's own search " + ("(skipped: SYNCBENCH_NO_TOOLKIT=1)" if no_toolkit()
                                                else "(runpath, ld.so.cache)"))
    return None, "; ".join(looked)


def not_found(lib, soname, looked):
    return (f"syncbench: CUPTI not found: {escape(os.path.basename(lib))} needs {soname}; looked "
            f"in {looked}; set SYNCBENCH_CUPTI to a {soname}, or pip install nvidia-cuda-cupti "
            f"(or install the CUDA toolkit)")


def prepare(lib):
    """Loads the CUPTI lib needs: (its path, where it was found, None); (None, None, None) where
    lib needs none; (None, None, what was looked in) where the loader is left to find it (lib's
    runpath, ld.so.cache). Raises LookupError with the message when it is nowhere or the file
    found does not load."""
    soname = needed_cupti(lib)
    if not soname:
        return None, None, None
    path = _loaded(soname)
    if path:
        return path, "already loaded in this process", None
    named = os.environ.get("SYNCBENCH_CUPTI")
    if named:
        if not os.access(named, os.R_OK):
            raise LookupError(f"syncbench: SYNCBENCH_CUPTI={escape(named)}: no such readable file")
        names = elf_names(named)
        if not names or names[1] != soname:
            has = escape(names[1]) if names and names[1] else "no shared library with a soname"
            raise LookupError(f"syncbench: SYNCBENCH_CUPTI={escape(named)} is {has}, not the "
                              f"{soname} that {escape(os.path.basename(lib))} needs")
        path, where = named, "SYNCBENCH_CUPTI"
    else:
        path, where = find(soname)
        if not path:
            if no_toolkit():
                raise LookupError(not_found(lib, soname, where))
            return None, None, where
    try:
        ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_GLOBAL)
    except OSError as e:
        raise LookupError(f"syncbench: cannot load CUPTI (from {where}): {escape(e)}") from None
    return path, where, None
