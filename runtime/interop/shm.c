/* Shared memory across processes: the POSIX shm + mmap allocator, share_memory_,
 * is_shared, handles (struct and string form) and mapping a handle in another
 * process.
 *
 * Every block is its own segment "/libops_<pid>_<random>", mapped MAP_SHARED,
 * with a 64-byte header in front of the data (magic, sizes, name) so a receiver
 * can check what it maps.  What this process needs to unmap and unlink (length,
 * name, owner) it keeps in a private page below the mapping, never in the shared
 * header another process could rewrite.  The creating process unlinks the name
 * when its storage dies; receivers only unmap.  So that a SIGKILLed creator leaks no name, the
 * first segment a process creates starts a janitor: /bin/sh in its own session
 * blocked reading a pipe whose only write end is ours.  When this process ends,
 * however it ends, the kernel closes that end, the read returns EOF and the
 * janitor removes /dev/shm/libops_<pid>_*.  A mapping outlives its name, so
 * receivers keep working.  docs/interop.md has the whole argument. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ops_interop.h"
#include "ops_internal.h"

#define SHM_HDR 64
#define SHM_MAGIC "LIBOPSM1"
#define SHM_PREFIX "/libops_"

/* At the start of every segment, shared by every process that maps it. */
typedef struct shm_header {
    char magic[8];
    uint64_t nbytes;    /* data bytes after the header */
    int32_t creator;    /* pid of the process that unlinks the name */
    char name[OPS_SHM_NAME_MAX - 20];
} shm_header;

_Static_assert(sizeof(shm_header) <= SHM_HDR, "the segment header must fit its slot");

static inline shm_header *
header_of(void *data)
{
    return (shm_header *)((char *)data - SHM_HDR);
}

static inline size_t
map_bytes_for(size_t nbytes)
{
    return SHM_HDR + nbytes;
}

/* ---- the janitor ---------------------------------------------------------- */

static pthread_mutex_t g_janitor_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_janitor_fd = -1; /* our write end of the janitor's pipe; under the lock */
static pid_t g_janitor_for;   /* the pid it cleans up after; under the lock */

extern char **environ;

/* Start this process's janitor unless it runs already.  A child made by fork()
 * inherits the parent's state: it closes its copy of the parent's pipe (so the
 * parent's janitor is not held up by it) and starts its own. */
static ops_status
ensure_janitor(const char *op)
{
    ops_status st = OPS_OK;
    const pid_t self = getpid();
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    bool fa_ok = false, attr_ok = false;
    int fds[2] = {-1, -1};

    pthread_mutex_lock(&g_janitor_lock);
    if (g_janitor_fd >= 0 && g_janitor_for == self)
        goto done;
    if (g_janitor_fd >= 0) {
        close(g_janitor_fd);
        g_janitor_fd = -1;
    }
    if (pipe2(fds, O_CLOEXEC) != 0) {
        st = ops_fail(OPS_ERR_RUNTIME, "%s: cannot start the shared-memory janitor: pipe: %s", op, strerror(errno));
        goto done;
    }
    char script[160];
    /* `read` returns at EOF only: nothing is ever written to the pipe. */
    snprintf(script, sizeof script,
             "trap '' INT HUP TERM QUIT PIPE; while read -r _; do :; done; exec rm -f /dev/shm%s%ld_*",
             SHM_PREFIX, (long)self);
    char *argv[] = {"sh", "-c", script, NULL};
    char *envp[] = {"PATH=/usr/bin:/bin", NULL};
    int err = posix_spawn_file_actions_init(&fa);
    fa_ok = err == 0;
    if (!err)
        err = posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
    if (!err)
        err = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (!err)
        err = posix_spawn_file_actions_adddup2(&fa, 1, 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    /* Keep the janitor from holding the caller's other descriptors open. */
    if (!err)
        err = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
    if (!err) {
        err = posix_spawnattr_init(&attr);
        attr_ok = err == 0;
    }
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    /* Its own session: a Ctrl-C to our process group must not take it down
     * before it has cleaned up after us. */
    if (!err)
        err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (!err)
        err = posix_spawnattr_setsigmask(&attr, &none);
    if (!err)
        err = posix_spawnattr_setsigdefault(&attr, &all);
    pid_t pid;
    if (!err)
        err = posix_spawn(&pid, "/bin/sh", &fa, &attr, argv, envp);
    if (err) {
        st = ops_fail(OPS_ERR_RUNTIME, "%s: cannot start the shared-memory janitor (/bin/sh): %s", op,
                      strerror(err));
        close(fds[1]);
        goto done;
    }
    g_janitor_fd = fds[1];
    g_janitor_for = self;

done:
    if (fds[0] >= 0)
        close(fds[0]);
    if (fa_ok)
        posix_spawn_file_actions_destroy(&fa);
    if (attr_ok)
        posix_spawnattr_destroy(&attr);
    pthread_mutex_unlock(&g_janitor_lock);
    return st;
}

/* ---- segments ------------------------------------------------------------- */

/* What unmapping and unlinking a segment need, kept where no other process can
 * write: in an anonymous private page mapped just below the segment.  The
 * segment's own header is shared memory, which any process that can open the
 * name can rewrite, so it is read only to check a segment when it is opened and
 * never trusted afterwards.  A fork()ed child gets a private copy of the page,
 * whose owner pid is not its own. */
typedef struct shm_private {
    size_t map_len; /* bytes of the segment mapping: SHM_HDR + data */
    pid_t owner;    /* the process that unlinks the name; 0 for a receiver */
    char name[OPS_SHM_NAME_MAX];
} shm_private;

static size_t
private_len(void)
{
    const long page = sysconf(_SC_PAGESIZE);
    return page > 0 && (size_t)page >= sizeof(shm_private) ? (size_t)page : 4096;
}

static inline shm_private *
private_of(void *data)
{
    return (shm_private *)((char *)data - SHM_HDR - private_len());
}

/* Map len bytes of fd below a private page recording name and owner; returns
 * the data address (SHM_HDR into the segment) or NULL with errno set. */
static void *
map_segment(int fd, size_t len, const char *name, pid_t owner)
{
    const size_t plen = private_len();
    if (len > SIZE_MAX - plen) {
        errno = ENOMEM;
        return NULL;
    }
    char *base = mmap(NULL, plen + len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    /* Over the reservation's tail, which is ours: nothing else can be there. */
    if (mmap(base + plen, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
        const int saved = errno;
        munmap(base, plen + len);
        errno = saved;
        return NULL;
    }
    shm_private *p = (shm_private *)base;
    p->map_len = len;
    p->owner = owner;
    snprintf(p->name, sizeof p->name, "%s", name);
    return base + plen + SHM_HDR;
}

/* Unmap a block mapped by map_segment; its owner also unlinks the name.  Only
 * the private record is read. */
static void
unmap_segment(void *data)
{
    shm_private *p = private_of(data);
    if (p->owner == getpid())
        shm_unlink(p->name);
    munmap(p, private_len() + p->map_len);
}

/* A fresh name "/libops_<pid>_<64 random bits>": another user cannot guess it
 * to create it first (which would make share_memory_ fail, or hand us a segment
 * they can write).  The pid part is what the janitor's pattern matches. */
static bool
random_name(char *name, size_t n)
{
    uint64_t r;
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t k = getrandom((char *)&r + got, sizeof r - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        got += (size_t)k;
    }
    snprintf(name, n, "%s%ld_%016" PRIx64, SHM_PREFIX, (long)getpid(), r);
    return true;
}

/* Create, size and map a new segment for nbytes of data; returns the data
 * address or NULL with the error set. */
static void *
segment_create(const char *op, size_t nbytes)
{
    if (ops_alloc_inject_failure())
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory (tried to allocate %zu bytes of shared memory)", op,
                             nbytes);
    if (nbytes > SIZE_MAX - SHM_HDR - private_len() || (uint64_t)map_bytes_for(nbytes) > (uint64_t)INT64_MAX)
        return ops_fail_null(OPS_ERR_OOM, "%s: %zu bytes of shared memory is too large", op, nbytes);
    if (ensure_janitor(op) != OPS_OK)
        return NULL;
    const size_t len = map_bytes_for(nbytes);
    char name[sizeof ((shm_header *)0)->name];
    int fd = -1;
    /* O_EXCL: a name that exists already (a guess that hit, or one left by an
     * earlier process with our pid) is never shared; draw another. */
    for (int tries = 0; tries < 64 && fd < 0; tries++) {
        if (!random_name(name, sizeof name))
            return ops_fail_null(OPS_ERR_RUNTIME, "%s: getrandom failed: %s", op, strerror(errno));
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0)
        return ops_fail_null(OPS_ERR_RUNTIME, "%s: shm_open(%s) failed: %s", op, name, strerror(errno));
    void *data = NULL;
    int saved = ENOMEM;
    if (!ops_alloc_inject_failure()) {
        if (ftruncate(fd, (off_t)len) == 0)
            data = map_segment(fd, len, name, getpid());
        saved = errno;
    }
    close(fd);
    if (data == NULL) {
        shm_unlink(name);
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory (tried to map %zu bytes of shared memory %s): %s", op,
                             len, name, strerror(saved));
    }
    /* For a receiver to check what it maps; never read back by this process. */
    shm_header *h = header_of(data);
    memcpy(h->magic, SHM_MAGIC, sizeof h->magic);
    h->nbytes = nbytes;
    h->creator = (int32_t)getpid();
    memcpy(h->name, name, sizeof h->name);
    return data;
}

static void *
shm_alloc(void *ctx, size_t nbytes)
{
    (void)ctx;
    return segment_create("shm_alloc", nbytes);
}

static void
shm_free(void *ctx, void *ptr, size_t nbytes)
{
    (void)ctx;
    (void)nbytes; /* the private record has the mapping's length */
    if (ptr)
        unmap_segment(ptr);
}

static const ops_allocator shm_allocator = {
    .name = "shm",
    .alloc = shm_alloc,
    .free = shm_free,
    .ctx = NULL,
};

const ops_allocator *
ops_shm_allocator(void)
{
    return &shm_allocator;
}

/* ---- share_memory_ / is_shared -------------------------------------------- */

ops_status
ops_tensor_share_memory_(ops_tensor *t)
{
    const char *op = "share_memory_";
    if (t == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: expected a tensor, got NULL", op);
    ops_storage *s = t->storage;
    if (s->device.type == OPS_CUDA || (s->flags & OPS_STORAGE_SHARED))
        return OPS_OK;
    if (s->device.type != OPS_CPU) {
        char dev[32];
        return ops_fail(OPS_ERR_DEVICE, "%s: expected a cpu tensor, got one on %s", op,
                        ops_device_str(s->device, dev, sizeof dev));
    }
    /* Moving the bytes frees the old ones, which an exporter still addresses.
     * (Other views are fine: they read the storage's new address.) */
    if (ops_storage_is_exported(s))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: cannot move a storage of %zu bytes into shared memory: it is exported (to NumPy, "
                        "DLPack or a memoryview) and its memory must not move; call share_memory_ before "
                        "exporting, or release the exports first",
                        op, s->nbytes);
    void *data = segment_create(op, s->nbytes);
    if (data == NULL)
        return ops_last_status();
    if (s->nbytes > 0)
        memcpy(data, s->data, s->nbytes);
    ops_storage_replace_data(s, data, &shm_allocator);
    s->flags |= OPS_STORAGE_SHARED;
    return OPS_OK;
}

bool
ops_tensor_is_shared(const ops_tensor *t)
{
    return t != NULL && (t->storage->device.type == OPS_CUDA || (t->storage->flags & OPS_STORAGE_SHARED));
}

/* ---- handles ----------------------------------------------------------------- */

ops_status
ops_tensor_shm_handle(const ops_tensor *t, ops_shm_handle *h)
{
    const char *op = "shm_handle";
    if (t == NULL || h == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: expected a tensor and a handle, got NULL", op);
    const ops_storage *s = t->storage;
    if (s->device.type != OPS_CPU || !(s->flags & OPS_STORAGE_SHARED))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: the tensor's storage is not in shared memory (call share_memory_ first)", op);
    memset(h, 0, sizeof *h);
    /* The private record's name: the segment header is writable by others. */
    snprintf(h->name, sizeof h->name, "%s", private_of(s->data)->name);
    h->nbytes = s->nbytes;
    h->dtype = t->dtype;
    h->ndim = t->ndim;
    for (int i = 0; i < t->ndim; i++) {
        h->sizes[i] = t->sizes[i];
        h->strides[i] = t->strides[i];
    }
    h->offset = t->offset;
    return OPS_OK;
}

/* Appends "a,b,c" to buf at *pos; false when it does not fit. */
static bool
put_list(char *buf, size_t buflen, size_t *pos, const int64_t *v, int n)
{
    for (int i = 0; i < n; i++) {
        int k = snprintf(buf + *pos, buflen - *pos, "%s%" PRId64, i ? "," : "", v[i]);
        if (k < 0 || (size_t)k >= buflen - *pos)
            return false;
        *pos += (size_t)k;
    }
    return true;
}

static bool
put_text(char *buf, size_t buflen, size_t *pos, const char *fmt, ...) OPS_PRINTF(4, 5);

static bool
put_text(char *buf, size_t buflen, size_t *pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *pos, buflen - *pos, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= buflen - *pos)
        return false;
    *pos += (size_t)k;
    return true;
}

ops_status
ops_shm_handle_to_string(const ops_shm_handle *h, char *buf, size_t buflen)
{
    const char *op = "shm_handle_to_string";
    if (h == NULL || buf == NULL || buflen == 0)
        return ops_fail(OPS_ERR_VALUE, "%s: expected a handle and a buffer, got NULL or an empty buffer", op);
    buf[0] = '\0';
    if (h->ndim < 0 || h->ndim > OPS_MAX_DIMS || ops_dtype_size(h->dtype) == 0 ||
        memchr(h->name, '\0', sizeof h->name) == NULL || strpbrk(h->name, ":\n") != NULL)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: the handle is malformed (ndim %d, dtype %d, or a name that is not NUL-terminated or "
                        "holds ':' or a newline)",
                        op, (int)h->ndim, (int)h->dtype);
    size_t pos = 0;
    bool ok = put_text(buf, buflen, &pos, "libops-shm:1:%s:%" PRIu64 ":%s:", h->name, h->nbytes,
                       ops_dtype_name(h->dtype)) &&
              put_list(buf, buflen, &pos, h->sizes, h->ndim) && put_text(buf, buflen, &pos, ":") &&
              put_list(buf, buflen, &pos, h->strides, h->ndim) &&
              put_text(buf, buflen, &pos, ":%" PRId64, h->offset);
    if (!ok) {
        buf[0] = '\0';
        return ops_fail(OPS_ERR_VALUE, "%s: a buffer of %zu bytes is too small (OPS_SHM_HANDLE_STR_MAX is %d)", op,
                        buflen, (int)OPS_SHM_HANDLE_STR_MAX);
    }
    return OPS_OK;
}

/* Parses a comma-separated list of int64 up to the next ':' (or end); returns the
 * position after the list, NULL on malformed text. */
static const char *
parse_list(const char *p, int64_t *v, int *n)
{
    *n = 0;
    if (*p == ':' || *p == '\0')
        return p;
    for (;;) {
        if (*n >= OPS_MAX_DIMS)
            return NULL;
        char *end;
        errno = 0;
        long long x = strtoll(p, &end, 10);
        if (end == p || errno != 0)
            return NULL;
        v[(*n)++] = x;
        p = end;
        if (*p != ',')
            return p;
        p++;
    }
}

ops_status
ops_shm_handle_from_string(const char *text, ops_shm_handle *h)
{
    const char *op = "shm_handle_from_string";
    if (text == NULL || h == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: expected a string and a handle, got NULL", op);
    ops_shm_handle r;
    memset(&r, 0, sizeof r);
    static const char tag[] = "libops-shm:1:";
    const char *p = text;
    if (strncmp(p, tag, sizeof tag - 1) != 0)
        goto bad;
    p += sizeof tag - 1;
    const char *colon = strchr(p, ':');
    if (colon == NULL || colon == p || (size_t)(colon - p) >= sizeof r.name || *p != '/')
        goto bad;
    memcpy(r.name, p, (size_t)(colon - p));
    p = colon + 1;
    char *end;
    errno = 0;
    if (*p < '0' || *p > '9')
        goto bad;
    unsigned long long nb = strtoull(p, &end, 10);
    if (errno != 0 || *end != ':')
        goto bad;
    r.nbytes = nb;
    p = end + 1;
    colon = strchr(p, ':');
    char dtname[16];
    if (colon == NULL || (size_t)(colon - p) >= sizeof dtname)
        goto bad;
    memcpy(dtname, p, (size_t)(colon - p));
    dtname[colon - p] = '\0';
    r.dtype = ops_dtype_from_name(dtname);
    if (r.dtype == OPS_DTYPE_NONE)
        goto bad;
    p = colon + 1;
    int nsizes, nstrides;
    p = parse_list(p, r.sizes, &nsizes);
    if (p == NULL || *p != ':')
        goto bad;
    p = parse_list(p + 1, r.strides, &nstrides);
    if (p == NULL || *p != ':' || nstrides != nsizes)
        goto bad;
    p++;
    errno = 0;
    long long off = strtoll(p, &end, 10);
    if (end == p || errno != 0 || *end != '\0')
        goto bad;
    r.offset = off;
    r.ndim = nsizes;
    *h = r;
    return OPS_OK;
bad:
    return ops_fail(OPS_ERR_VALUE, "%s: not a libops shared-memory handle: \"%.120s\"", op, text);
}

/* A receiver's storage deleter: unmap only (its record's owner is 0). */
static void
segment_release(void *data, void *ctx)
{
    (void)ctx;
    unmap_segment(data);
}

ops_tensor *
ops_tensor_from_shm_handle(const ops_shm_handle *h)
{
    const char *op = "from_shm_handle";
    char buf[OPS_SHAPE_STR_LEN], buf2[OPS_SHAPE_STR_LEN];
    if (h == NULL)
        return ops_fail_null(OPS_ERR_VALUE, "%s: expected a handle, got NULL", op);
    const size_t item = ops_dtype_size(h->dtype);
    if (item == 0)
        return ops_fail_null(OPS_ERR_DTYPE, "%s: invalid dtype (%d) in the handle", op, (int)h->dtype);
    if (h->ndim < 0 || h->ndim > OPS_MAX_DIMS)
        return ops_fail_null(OPS_ERR_VALUE, "%s: tensors have 0 to %d dimensions, got %d", op, OPS_MAX_DIMS,
                             (int)h->ndim);
    if (memchr(h->name, '\0', sizeof h->name) == NULL || strncmp(h->name, SHM_PREFIX, strlen(SHM_PREFIX)) != 0)
        return ops_fail_null(OPS_ERR_VALUE, "%s: \"%.*s\" is not the name of a libops segment", op,
                             (int)sizeof h->name, h->name);
    const int ndim = h->ndim;
    /* The geometry must address only elements inside the storage. */
    bool empty = false, overflow = false;
    int64_t lo = h->offset, hi = h->offset, numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (h->sizes[i] < 0)
            return ops_fail_null(OPS_ERR_VALUE, "%s: negative size in shape %s", op,
                                 ops_shape_str(ndim, h->sizes, buf, sizeof buf));
        empty |= h->sizes[i] == 0;
        overflow |= __builtin_mul_overflow(numel, h->sizes[i], &numel);
    }
    for (int i = 0; i < ndim && !empty; i++) {
        int64_t span;
        overflow |= __builtin_mul_overflow(h->sizes[i] - 1, h->strides[i], &span);
        overflow |= __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi);
    }
    const int64_t storage_elems = (int64_t)(h->nbytes / item);
    if (overflow || h->offset < 0 || h->nbytes > (uint64_t)INT64_MAX ||
        (!empty && (lo < 0 || hi >= storage_elems)))
        return ops_fail_null(OPS_ERR_VALUE,
                             "%s: shape %s with strides %s at offset %" PRId64
                             " does not fit a storage of %" PRIu64 " bytes of %s",
                             op, ops_shape_str(ndim, h->sizes, buf, sizeof buf),
                             ops_shape_str(ndim, h->strides, buf2, sizeof buf2), h->offset, h->nbytes,
                             ops_dtype_name(h->dtype));
    if (ops_alloc_inject_failure())
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory mapping %s", op, h->name);

    int fd = shm_open(h->name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0)
        return ops_fail_null(OPS_ERR_VALUE,
                             "%s: cannot open shared memory %s: %s (the process that shared it must still hold "
                             "the tensor)",
                             op, h->name, strerror(errno));
    struct stat st;
    const size_t len = map_bytes_for((size_t)h->nbytes);
    if (fstat(fd, &st) != 0) {
        const int saved = errno;
        close(fd);
        return ops_fail_null(OPS_ERR_RUNTIME, "%s: fstat(%s) failed: %s", op, h->name, strerror(saved));
    }
    /* A segment made by another user, or one others may write, is not one of
     * ours: whoever can write it can also truncate it under us. */
    if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        close(fd);
        return ops_fail_null(OPS_ERR_VALUE,
                             "%s: shared memory %s belongs to uid %ld with mode %03o; libops maps only its own "
                             "user's segments of mode 0600",
                             op, h->name, (long)st.st_uid, (unsigned)(st.st_mode & 0777));
    }
    /* The size now: a segment truncated by some process would make every access
     * past its end SIGBUS (docs/interop.md: truncation is detected here, not
     * prevented afterwards). */
    if ((uint64_t)st.st_size != (uint64_t)len) {
        close(fd);
        return ops_fail_null(OPS_ERR_VALUE, "%s: shared memory %s has %lld bytes, expected %zu for %" PRIu64
                             " bytes of storage", op, h->name, (long long)st.st_size, len, h->nbytes);
    }
    char *data = NULL;
    int saved = ENOMEM;
    if (!ops_alloc_inject_failure()) {
        data = map_segment(fd, len, h->name, 0);
        saved = errno;
    }
    close(fd);
    if (data == NULL)
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory mapping %zu bytes of shared memory %s: %s", op, len,
                             h->name, strerror(saved));
    const shm_header *sh = header_of(data);
    if (memcmp(sh->magic, SHM_MAGIC, sizeof sh->magic) != 0 || sh->nbytes != h->nbytes) {
        unmap_segment(data);
        return ops_fail_null(OPS_ERR_VALUE, "%s: %s is not a libops segment of %" PRIu64 " bytes", op, h->name,
                             h->nbytes);
    }
    /* One 1-d tensor over the whole storage owns the mapping; the result is the
     * handle's view of it. */
    const int64_t elems = storage_elems;
    ops_tensor *whole = ops_tensor_from_blob(data, (ops_int_list){&elems, 1}, (ops_int_list){NULL, 0}, h->dtype,
                                             OPS_DEVICE_CPU, segment_release, NULL);
    if (whole == NULL) {
        unmap_segment(data);
        /* Everything was checked: only its header allocation can have failed. */
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory allocating a tensor header", op);
    }
    whole->storage->nbytes = (size_t)h->nbytes;
    whole->storage->flags |= OPS_STORAGE_SHARED;
    ops_tensor *t = ops_tensor_new_view(whole, ndim, h->sizes, h->strides, h->offset);
    ops_tensor_release(whole); /* on failure this unmaps */
    if (t == NULL)
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory allocating a tensor header", op);
    return t;
}
