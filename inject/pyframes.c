#include "pyframes.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "out.h"
#include "pywalk.h"
#include "base/dynlib.h"
#include "base/envvars.h"
#include "base/utf8.h"

#define TABLE_SIZE SBA_PY_MAX_STACKS

typedef int (*int_fn)(void);
typedef void *(*tstate_fn)(void);
typedef void (*dump_fn)(int fd, void *tstate);
typedef const char *(*version_fn)(void);

static int_fn is_initialized, is_finalizing;
/* the raw reader (pywalk.c) names stacks; cleared for good when a stack it read disagrees with
 * the writer's */
static int walk_on;
static int py_ready; /* the functions above are looked up */
/* how stacks are read (sba_py_reader), NULL before sba_py_init found a Python */
static const char *reader;
/* why no frame is recorded, for the warn record sba_py_warn writes; "": they are */
static char no_frames[320];
static tstate_fn this_thread_state;
static dump_fn dump_traceback;

/* A libpython the program loaded privately (an embedding application): its symbols are not in
 * the global scope, so it is opened again by name. */
static int find_libpython(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *slash = strrchr(info->dlpi_name, '/');
    const char *base = slash ? slash + 1 : info->dlpi_name;
    if (strncmp(base, "libpython3", 10) != 0)
        return 0;
    *(void **)data = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
    return *(void **)data != NULL;
}

void sba_py_init(void)
{
    void *h = RTLD_DEFAULT;
    if (!dlsym(h, "Py_IsInitialized")) {
        void *lib = NULL;
        dl_iterate_phdr(find_libpython, &lib);
        if (!lib)
            return; /* no Python in this process */
        h = lib;
    }
    dump_fn dump = (dump_fn)dlsym(h, "_Py_DumpTraceback"); /* 3.13's is not exported */
    const sb_dynsym syms[] = {
        {"PyGILState_GetThisThreadState", (void **)&this_thread_state, 0, NULL},
        {"Py_IsInitialized", (void **)&is_initialized, 0, NULL},
        /* 3.13 names it Py_IsFinalizing; 3.9 to 3.12 _Py_IsFinalizing */
        {"Py_IsFinalizing", (void **)&is_finalizing, 1, "_Py_IsFinalizing"},
    };
    const sb_dynsym *missing = sb_dynlib_resolve(h, syms, sizeof syms / sizeof *syms, NULL, 0);
    int writer_only = sb_env_is(SB_ENV_PY_WALK, "0"); /* the writer for every call */
    version_fn version = (version_fn)dlsym(h, "Py_GetVersion");
    walk_on = !missing && !writer_only && sba_pywalk_init(h, version) == 0;
    const char *why_not_raw = NULL;
    const char *raw = sba_pywalk_source(&why_not_raw);
    reader = missing ? "none" : walk_on ? raw : dump ? "writer" : "none";
    if (missing || (!dump && !walk_on)) {
        char why[256] = "";
        if (!missing)
            snprintf(why, sizeof why, ", and its frames cannot be read raw%s%s%s",
                     why_not_raw ? " (" : "", why_not_raw ? why_not_raw : "",
                     why_not_raw ? ")" : "");
        snprintf(no_frames, sizeof no_frames,
                 "Python frames cannot be recorded: this Python exports no %s%s",
                 missing ? missing->name : "_Py_DumpTraceback", why);
        return;
    }
    dump_traceback = dump; /* NULL: the raw reader's own text names each stack */
    __atomic_store_n(&py_ready, 1, __ATOMIC_RELEASE); /* set last: the captures test it */
}

/* Each thread writes its stack into a pipe of its own (no lock between threads): a write to a
 * pipe costs less than one to a memory file, and _Py_DumpTraceback writes each piece of a frame
 * apart (seven writes a frame). Both ends are non-blocking, so a dump longer than the pipe holds
 * (64 KiB; sba_py_capture reads at most 32 KiB of it) loses its outermost frames instead of
 * waiting. The program may close any descriptor: the
 * pipe is known by its inode, and made anew when a number now names something else. */
typedef struct {
    int fd[2];
    dev_t dev;
    ino_t ino;
} thread_pipe;

static pthread_key_t pipe_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static int ours(const thread_pipe *t)
{
    struct stat a, b;
    return t->fd[0] >= 0 && fstat(t->fd[0], &a) == 0 && fstat(t->fd[1], &b) == 0 &&
           a.st_dev == t->dev && a.st_ino == t->ino && b.st_dev == t->dev && b.st_ino == t->ino;
}

/* Closes each end that is still this pipe's (the program may have closed and reused either). */
static void close_ours(thread_pipe *t)
{
    struct stat st;
    for (int k = 0; k < 2; k++)
        if (t->fd[k] >= 0 && fstat(t->fd[k], &st) == 0 && st.st_dev == t->dev &&
            st.st_ino == t->ino)
            close(t->fd[k]);
    t->fd[0] = t->fd[1] = -1;
}

static void close_thread_pipe(void *p)
{
    close_ours(p);
    free(p);
}

static void make_key(void)
{
    pthread_key_create(&pipe_key, close_thread_pipe);
}

/* This thread's pipe, empty; NULL when none can be made. */
static thread_pipe *thread_pipe_of(void)
{
    pthread_once(&key_once, make_key);
    thread_pipe *t = pthread_getspecific(pipe_key);
    if (t && ours(t))
        return t;
    if (!t) {
        t = malloc(sizeof *t);
        if (!t)
            return NULL;
        pthread_setspecific(pipe_key, t);
    } else {
        close_ours(t); /* the program closed one end: the other, if still ours, goes too */
    }
    struct stat st;
    if (pipe2(t->fd, O_CLOEXEC | O_NONBLOCK) != 0) {
        t->fd[0] = t->fd[1] = -1;
        return NULL;
    }
    if (fstat(t->fd[0], &st) != 0) {
        close(t->fd[0]);
        close(t->fd[1]);
        t->fd[0] = t->fd[1] = -1;
        return NULL;
    }
    t->dev = st.st_dev, t->ino = st.st_ino;
    return t;
}

/* The calling thread's Python stack as _Py_DumpTraceback writes it, into buf (NUL-ended);
 * its length, 0 when the thread runs no Python. */
static size_t sba_py_capture(char *buf, size_t n)
{
    if (!__atomic_load_n(&py_ready, __ATOMIC_ACQUIRE) || !dump_traceback || !is_initialized() ||
        (is_finalizing && is_finalizing()))
        return 0;
    void *ts = this_thread_state(); /* this thread's, with or without the GIL */
    if (!ts)
        return 0; /* a thread that never ran Python */
    thread_pipe *t = thread_pipe_of();
    if (!t)
        return 0;
    dump_traceback(t->fd[1], ts);
    ssize_t r = read(t->fd[0], buf, n - 1);
    size_t len = r > 0 ? (size_t)r : 0;
    if (len == n - 1) { /* a dump longer than buf: the rest goes, the pipe is left empty */
        char rest[4096];
        while (read(t->fd[0], rest, sizeof rest) > 0) {
        }
    }
    buf[len] = 0;
    return len;
}

/* ---- the record ---- */

static int hex_value(const char *s, int digits, unsigned long *v)
{
    *v = 0;
    for (int i = 0; i < digits; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        *v = *v * 16 + (unsigned long)d;
    }
    return 0;
}

static size_t put_utf8(unsigned long cp, char *out)
{
    if (cp < 0x80)
        return out[0] = (char)cp, 1;
    if (cp < 0x800)
        return out[0] = (char)(0xc0 | cp >> 6), out[1] = (char)(0x80 | (cp & 0x3f)), 2;
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12), out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18), out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The dump writes every character beyond ASCII as \xNN, \uNNNN or \UNNNNNNNN: back to UTF-8
 * (what is not valid then becomes '?'). [s, e) into out (n bytes). */
static void unescape(const char *s, const char *e, char *out, size_t n)
{
    size_t k = 0;
    while (s < e && k + 5 < n) {
        int digits = 0;
        if (s[0] == '\\' && s + 1 < e)
            digits = s[1] == 'x' ? 2 : s[1] == 'u' ? 4 : s[1] == 'U' ? 8 : 0;
        unsigned long cp;
        if (digits && s + 2 + digits <= e && hex_value(s + 2, digits, &cp) == 0 && cp <= 0x10ffff) {
            k += put_utf8(cp, out + k);
            s += 2 + digits;
        } else {
            out[k++] = *s++;
        }
    }
    out[k] = 0;
    sb_utf8_sanitize(out);
}

/* `  File "F", line N in NAME` -> ["F","NAME",N]; F made absolute (the program may change
 * folder before the analyzer reads the source line). 0 when the line is not a frame. */
static size_t frame_json(const char *line, const char *eol, char *out, size_t n)
{
    static const char head[] = "  File \"";
    if ((size_t)(eol - line) <= sizeof head || strncmp(line, head, sizeof head - 1) != 0)
        return 0;
    const char *file = line + sizeof head - 1;
    const char *mid = NULL;
    for (const char *p = eol - 1; p > file; p--)
        if (!strncmp(p, "\", line ", 8)) {
            mid = p;
            break;
        }
    if (!mid)
        return 0;
    const char *num = mid + 8, *in = strstr(num, " in ");
    if (!in || in > eol)
        return 0;
    long lineno = strtol(num, NULL, 10); /* "???" when unknown: 0 */
    char name[1024], path[PATH_MAX + 1024], cwd[PATH_MAX];
    unescape(file, mid, path, sizeof path);
    if (path[0] != '/' && path[0] != '<' && getcwd(cwd, sizeof cwd)) {
        size_t c = strlen(cwd), m = strlen(path);
        if (c + 1 + m < sizeof path) {
            memmove(path + c + 1, path, m + 1);
            memcpy(path, cwd, c);
            path[c] = '/';
        }
    }
    unescape(in + 4, eol, name, sizeof name);
    char ef[sizeof path * 2], en[sizeof name * 6 + 1];
    return (size_t)snprintf(out, n, "[\"%s\",\"%s\",%ld]", sba_json_escape(ef, sizeof ef, path),
                            sba_json_escape(en, sizeof en, name), lineno);
}

/* each stack's record, kept for the blocks (blocks.c) once the in-process API attached */
static char *lines[TABLE_SIZE];
static int keep_lines;

/* Stack id's record; write: into the record file too (the first time), else only kept. */
static void write_pystack(long id, const char *text, size_t len, int write)
{
    static char line[64 << 10]; /* under the table's lock */
    char frame[8192];
    size_t k =
        (size_t)snprintf(line, sizeof line, "{\"t\":\"pystack\",\"id\":%ld,\"frames\":[", id);
    int first = 1;
    for (const char *s = text, *end = text + len; s < end;) {
        const char *eol = memchr(s, '\n', (size_t)(end - s));
        if (!eol)
            break; /* a line cut by the buffer's end */
        size_t m = frame_json(s, eol, frame, sizeof frame);
        if (m && m < sizeof frame && k + m + 4 < sizeof line) {
            k += (size_t)snprintf(line + k, sizeof line - k, "%s%s", first ? "" : ",", frame);
            first = 0;
        }
        s = eol + 1;
    }
    k += (size_t)snprintf(line + k, sizeof line - k, "]}");
    if (write)
        sba_out_line(line, k);
    if (keep_lines)
        lines[id] = strndup(line, k);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The thread that holds lock: a wait inside it (an allocation's futex lock, under
 * sba_py_stack_id's strndup) may run waits/'s probe on that thread, which must not lock again. */
static pthread_t lock_owner;
static int lock_owned;

static void table_lock(void)
{
    pthread_mutex_lock(&lock);
    lock_owner = pthread_self();
    __atomic_store_n(&lock_owned, 1, __ATOMIC_RELEASE);
}

static void table_unlock(void)
{
    __atomic_store_n(&lock_owned, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
}

static int table_mine(void)
{
    return __atomic_load_n(&lock_owned, __ATOMIC_ACQUIRE) &&
           pthread_equal(lock_owner, pthread_self());
}
static uint64_t table[TABLE_SIZE];

void sba_py_keep_lines(void)
{
    table_lock();
    keep_lines = 1;
    table_unlock();
}

char *sba_py_stack_line(long id)
{
    table_lock();
    const char *line = id >= 0 && id < TABLE_SIZE ? lines[id] : NULL;
    table_unlock();
    /* copied outside the lock (a kept line is never changed nor freed): an allocation that
     * waits must not hold it */
    return line ? strdup(line) : NULL;
}

static long ids[TABLE_SIZE];
static long next_id;

/* The id of the stack `text`, writing its record the first time; -1 when len == 0 or the table
 * is full. */
static long sba_py_stack_id(const char *text, size_t len)
{
    if (!len)
        return -1;
    uint64_t h = 1469598103934665603ull; /* FNV-1a of the text */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)text[i];
        h *= 1099511628211ull;
    }
    h = h ? h : 1;
    long id = -1;
    table_lock();
    for (size_t i = h % TABLE_SIZE, probes = 0; probes < TABLE_SIZE;
         i = (i + 1) % TABLE_SIZE, probes++) {
        if (table[i] == h) {
            id = ids[i];
            if (keep_lines && !lines[id]) /* first seen before the API attached */
                write_pystack(id, text, len, 0);
            break;
        }
        if (table[i] == 0) {
            if (next_id >= TABLE_SIZE * 3 / 4)
                break; /* nearly full: new stacks go without an id */
            table[i] = h;
            ids[i] = id = next_id++;
            write_pystack(id, text, len, 1);
            break;
        }
    }
    table_unlock();
    return id;
}

/* ---- stacks known by their raw identity ---- */

static uint64_t walk_keys[TABLE_SIZE][2];
static long walk_ids[TABLE_SIZE];
static long walk_count;

/* The id under key, or -1; with insert_id >= 0, puts it there when absent. Under the lock. */
static long walk_slot(const uint64_t key[2], long insert_id)
{
    for (size_t i = key[0] % TABLE_SIZE, probes = 0; probes < TABLE_SIZE;
         i = (i + 1) % TABLE_SIZE, probes++) {
        if (walk_keys[i][0] == key[0] && walk_keys[i][1] == key[1])
            return walk_ids[i];
        if (!walk_keys[i][1]) { /* never 0 in a key: an empty slot */
            if (insert_id < 0 || walk_count >= TABLE_SIZE * 3 / 4)
                return -1;
            walk_keys[i][0] = key[0], walk_keys[i][1] = key[1];
            walk_ids[i] = insert_id;
            walk_count++;
            return insert_id;
        }
    }
    return -1;
}

/* Whether the writer's text has the frames the raw reader counted: a layout read wrong would
 * give another count (or no code object at all, caught in pywalk.c). */
static int text_agrees(const char *text, size_t len, const sba_pywalk_stack *s)
{
    int frames = 0, truncated = 0;
    for (const char *p = text, *end = text + len; p < end;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            break;
        frames += !strncmp(p, "  File \"", 8);
        truncated |= !strncmp(p, "  ...", 5);
        p = eol + 1;
    }
    return frames == s->frames && truncated == s->truncated;
}

/* The calling thread's stack as text, the writer's or the raw reader's: one buffer a thread. */
static _Thread_local char text[32 << 10];

static long stack_by_writer(void)
{
    return sba_py_stack_id(text, sba_py_capture(text, sizeof text));
}

/* A stack the table does not know: named once, by the writer where this Python exports one
 * (checked against the frames read raw), else by the raw reader's own text. */
static long new_stack(const sba_pywalk_stack *s)
{
    size_t len =
        dump_traceback ? sba_py_capture(text, sizeof text) : sba_pywalk_text(s, text, sizeof text);
    long id = sba_py_stack_id(text, len);
    if (id < 0 || (dump_traceback && len >= sizeof text - 1))
        return id; /* a dump the buffer cut cannot be checked: this stack is named each time */
    if (dump_traceback && !text_agrees(text, len, s)) {
        __atomic_store_n(&walk_on, 0, __ATOMIC_RELAXED);
        sba_out_printf("{\"t\":\"warn\",\"msg\":\"Python frames are read by CPython's "
                       "traceback writer for every call: this Python's frames do not look as "
                       "expected\"}");
        return id;
    }
    table_lock();
    walk_slot(s->key, id);
    table_unlock();
    return id;
}

/* Set while this thread is in sba_py_stack_here (a thread-local: that runs on CUDA's callback,
 * whose thread-locals are set up already). */
static _Thread_local int inside;

static int py_running(void)
{
    return __atomic_load_n(&py_ready, __ATOMIC_ACQUIRE) && is_initialized() &&
           !(is_finalizing && is_finalizing());
}

/* The id of the stack read raw into s, -1 when the table has none (or none kept yet). */
static long known_stack(const sba_pywalk_stack *s)
{
    table_lock();
    long id = walk_slot(s->key, -1);
    if (id >= 0 && keep_lines && !lines[id])
        id = -1; /* first seen before the in-process API attached: named again, and kept */
    table_unlock();
    return id;
}

long sba_py_stack_here(void)
{
    if (inside || !py_running())
        return -1;
    const void *ts = this_thread_state(); /* this thread's, with or without the GIL */
    if (!ts)
        return -1; /* a thread that never ran Python */
    inside = 1;
    sba_pywalk_stack s;
    long id;
    if (!__atomic_load_n(&walk_on, __ATOMIC_RELAXED) || sba_pywalk_read(ts, &s) != 0)
        id = dump_traceback ? stack_by_writer() : -1;
    else if ((id = known_stack(&s)) < 0)
        id = new_stack(&s);
    inside = 0;
    return id;
}

long sba_py_stack_waiting(void)
{
    /* no thread-local here: its first use on a thread allocates (dynamic TLS) */
    if (table_mine() || !py_running() || !__atomic_load_n(&walk_on, __ATOMIC_RELAXED))
        return -1;
    const void *ts = this_thread_state();
    sba_pywalk_stack s;
    if (!ts || sba_pywalk_read(ts, &s) != 0)
        return -1;
    long id = known_stack(&s);
    /* a new stack is named by the raw reader's text (the writer's pipe is allocated); not
     * while the in-process API keeps each stack's line (a copy is allocated) */
    if (id < 0 && !__atomic_load_n(&keep_lines, __ATOMIC_RELAXED)) {
        char raw[16 << 10]; /* on the stack: the thread-local buffer may not exist yet */
        size_t len = sba_pywalk_text(&s, raw, sizeof raw);
        if ((id = sba_py_stack_id(raw, len)) >= 0) {
            table_lock();
            walk_slot(s.key, id);
            table_unlock();
        }
    }
    return id;
}

const char *sba_py_reader(void)
{
    return reader;
}

void sba_py_proc_field(char *buf, size_t n)
{
    buf[0] = 0;
    if (reader)
        snprintf(buf, n, ",\"pyread\":\"%s\"", reader);
}

void sba_py_warn(void)
{
    char esc[sizeof no_frames * 2];
    if (no_frames[0])
        sba_out_printf("{\"t\":\"warn\",\"msg\":\"%s\"}",
                       sba_json_escape(esc, sizeof esc, no_frames));
    no_frames[0] = 0; /* said once */
}

int sba_py_walking(void)
{
    return __atomic_load_n(&walk_on, __ATOMIC_RELAXED);
}
