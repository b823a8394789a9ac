/* Shared memory (runtime/interop/shm.c): share_memory_ in place, is_shared, handles and
 * their string form, mapping a handle in the same process and in another one,
 * writes visible both ways, a receiver and a creator SIGKILLed, and no segment
 * of ours left in /dev/shm afterwards.
 *
 * The second process is this program again (/proc/self/exe --helper ...), so
 * the test needs no other build target; it talks to it over stdin/stdout. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ops_interop.h"
#include "ops_internal.h"

extern char **environ;

#define N 1000 /* elements of the cross-process tensors */

/* No Check calls: the helper process uses it outside any test. */
static ops_tensor *
arange_f32_or_null(int64_t n)
{
    ops_tensor *t = ops_tensor_new("test", 1, &n, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    if (t == NULL)
        return NULL;
    float *p = ops_tensor_data_ptr(t);
    for (int64_t i = 0; i < n; i++)
        p[i] = (float)i;
    return t;
}

static ops_tensor *
arange_f32(int64_t n)
{
    ops_tensor *t = arange_f32_or_null(n);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* Segments in /dev/shm that process pid created ("libops_<pid>_*"). */
static int
count_segments(pid_t pid)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "libops_%ld_", (long)pid);
    DIR *d = opendir("/dev/shm");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* Waits up to 10 s for pid's segments to go (its janitor runs asynchronously). */
static int
wait_segments_gone(pid_t pid)
{
    for (int i = 0; i < 1000; i++) {
        int n = count_segments(pid);
        if (n == 0)
            return 0;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    return count_segments(pid);
}

/* Segments made since start whose creator no longer runs. */
static int
orphan_segments(time_t start)
{
    DIR *d = opendir("/dev/shm");
    if (d == NULL)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long pid;
        struct stat st;
        if (sscanf(e->d_name, "libops_%ld_", &pid) != 1 || pid <= 0)
            continue;
        if (fstatat(dirfd(d), e->d_name, &st, 0) != 0 || st.st_ctime < start)
            continue;
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            fprintf(stderr, "test_shm: /dev/shm/%s outlived process %ld\n", e->d_name, pid);
            n++;
        }
    }
    closedir(d);
    return n;
}

/* ---- the helper process ------------------------------------------------------ */

static int
helper_fail(const char *what)
{
    printf("fail %s: %s\n", what, ops_last_error());
    fflush(stdout);
    return 1;
}

static bool
read_line(FILE *f, char *buf, size_t n)
{
    if (fgets(buf, (int)n, f) == NULL)
        return false;
    buf[strcspn(buf, "\n")] = '\0';
    return true;
}

static bool
values_are(const float *p, float scale, float shift)
{
    for (int i = 0; i < N; i++)
        if (p[i] != scale * (float)i + shift)
            return false;
    return true;
}

/* "open <handle>": map it, check arange, add 1000, say "written"; on "check"
 * expect the parent's -i, say "seen"; exit at EOF.
 * "create": share an arange, print its handle; on "check" expect -i, say
 * "seen"; exit (releasing) at EOF, unless killed first. */
static int
helper_main(int argc, char **argv)
{
    char line[OPS_SHM_HANDLE_STR_MAX];
    int rc = 0;
    ops_tensor *t = NULL;
    if (argc >= 4 && strcmp(argv[2], "open") == 0) {
        ops_shm_handle h;
        if (ops_shm_handle_from_string(argv[3], &h) != OPS_OK)
            return helper_fail("parse");
        t = ops_tensor_from_shm_handle(&h);
        if (t == NULL)
            return helper_fail("open");
        float *p = ops_tensor_data_ptr(t);
        if (!ops_tensor_is_shared(t) || !values_are(p, 1, 0)) {
            ops_tensor_release(t);
            return helper_fail("values");
        }
        for (int i = 0; i < N; i++)
            p[i] += 1000;
        printf("written\n");
    } else if (argc >= 3 && strcmp(argv[2], "create") == 0) {
        t = arange_f32_or_null(N);
        ops_shm_handle h;
        if (t == NULL || ops_tensor_share_memory_(t) != OPS_OK || ops_tensor_shm_handle(t, &h) != OPS_OK ||
            ops_shm_handle_to_string(&h, line, sizeof line) != OPS_OK) {
            ops_tensor_release(t);
            return helper_fail("share");
        }
        printf("%s\n", line);
    } else {
        return 2;
    }
    fflush(stdout);
    while (read_line(stdin, line, sizeof line)) {
        if (strcmp(line, "check") == 0) {
            rc = values_are(ops_tensor_data_ptr(t), -1, 0) ? 0 : 1;
            printf(rc ? "fail check\n" : "seen\n");
            fflush(stdout);
        }
    }
    ops_tensor_release(t);
    return rc;
}

/* ---- driving it ----------------------------------------------------------------- */

typedef struct child {
    pid_t pid;
    FILE *in;  /* its stdin */
    FILE *out; /* its stdout */
} child;

static child
spawn_helper(const char *mode, const char *arg)
{
    char exe[4096];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ck_assert_int_gt(k, 0);
    exe[k] = '\0';
    int to[2], from[2];
    ck_assert_int_eq(pipe2(to, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(from, O_CLOEXEC), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, to[0], 0);
    posix_spawn_file_actions_adddup2(&fa, from[1], 1);
#ifdef OPS_CHECK_PROGRAM
    /* linked into a runner (tests/check_runner.c): the helper is its program too */
    char *argv[] = {exe, OPS_CHECK_PROGRAM, "--helper", (char *)mode, (char *)arg, NULL};
#else
    char *argv[] = {exe, "--helper", (char *)mode, (char *)arg, NULL};
#endif
    child c;
    ck_assert_int_eq(posix_spawn(&c.pid, exe, &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(to[0]);
    close(from[1]);
    c.in = fdopen(to[1], "w");
    c.out = fdopen(from[0], "r");
    ck_assert_ptr_nonnull(c.in);
    ck_assert_ptr_nonnull(c.out);
    return c;
}

static void
child_send(child *c, const char *msg)
{
    fprintf(c->in, "%s\n", msg);
    fflush(c->in);
}

static void
child_expect(child *c, const char *want)
{
    char line[OPS_SHM_HANDLE_STR_MAX];
    ck_assert_msg(read_line(c->out, line, sizeof line), "helper said nothing (expected %s)", want);
    ck_assert_str_eq(line, want);
}

/* Closes its stdin (it exits) and returns its wait status. */
static int
child_finish(child *c)
{
    int status = 0;
    fclose(c->in);
    ck_assert_int_eq(waitpid(c->pid, &status, 0), c->pid);
    fclose(c->out);
    return status;
}

static int
child_kill(child *c)
{
    int status = 0;
    ck_assert_int_eq(kill(c->pid, SIGKILL), 0);
    ck_assert_int_eq(waitpid(c->pid, &status, 0), c->pid);
    fclose(c->in);
    fclose(c->out);
    return status;
}

/* ---- tests ------------------------------------------------------------------------ */

START_TEST(test_share_in_place)
{
    ops_tensor *t = arange_f32(10); /* small: bytes embedded in the header block */
    ops_tensor *v = ops_tensor_new_view(t, 2, (int64_t[]){2, 3}, (int64_t[]){4, 1}, 2);
    ck_assert_ptr_nonnull(v);
    ck_assert(!ops_tensor_is_shared(t));
    ck_assert_int_eq(count_segments(getpid()), 0);
    ck_assert_int_eq(ops_tensor_share_memory_(v), OPS_OK);
    ck_assert(ops_tensor_is_shared(t)); /* every view of the storage */
    ck_assert(ops_tensor_is_shared(v));
    ck_assert_int_eq(count_segments(getpid()), 1);
    const float *p = ops_tensor_data_ptr(t);
    for (int i = 0; i < 10; i++)
        ck_assert(p[i] == (float)i);
    ck_assert(((const float *)ops_tensor_data_ptr(v))[5] == 7.0f); /* v[1, 1] = t[2 + 4 + 1] */
    ck_assert_uint_eq(((uintptr_t)p) % 64, 0);
    /* Already shared: a no-op. */
    ck_assert_int_eq(ops_tensor_share_memory_(t), OPS_OK);
    ck_assert_ptr_eq(ops_tensor_data_ptr(t), p);
    ck_assert_int_eq(count_segments(getpid()), 1);

    ops_shm_handle h;
    ck_assert_int_eq(ops_tensor_shm_handle(v, &h), OPS_OK);
    ck_assert_int_eq(strncmp(h.name, "/libops_", 8), 0);
    ck_assert_uint_eq(h.nbytes, 10 * sizeof(float));
    ck_assert_int_eq(h.dtype, OPS_FLOAT32);
    ck_assert_int_eq(h.ndim, 2);
    ck_assert_int_eq(h.sizes[0], 2);
    ck_assert_int_eq(h.strides[0], 4);
    ck_assert_int_eq(h.offset, 2);

    /* The storage cannot move any more. */
    ck_assert_int_ne(ops_tensor_resize_("resize_", t, 1, (int64_t[]){100}), OPS_OK);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "shared memory"));
    ck_assert_int_eq(ops_tensor_numel(t), 10);

    ops_tensor_release(t);
    ck_assert_int_eq(count_segments(getpid()), 1); /* v holds it */
    ops_tensor_release(v);
    ck_assert_int_eq(count_segments(getpid()), 0);
}
END_TEST

static int g_blob_deleted;

static void
blob_deleter(void *data, void *ctx)
{
    (void)data;
    (void)ctx;
    g_blob_deleted++;
}

START_TEST(test_share_large_and_borrowed)
{
    ops_tensor *t = arange_f32(1 << 20); /* 4 MiB: the allocator's cached large path */
    ck_assert_int_eq(ops_tensor_share_memory_(t), OPS_OK);
    const float *p = ops_tensor_data_ptr(t);
    ck_assert(p[(1 << 20) - 1] == (float)((1 << 20) - 1));
    ops_tensor_release(t);
    ck_assert_int_eq(count_segments(getpid()), 0);

    float buf[6] = {1, 2, 3, 4, 5, 6};
    g_blob_deleted = 0;
    t = ops_tensor_from_blob(buf, OPS_INTS(2, 3), OPS_INTS(), OPS_FLOAT32, OPS_DEVICE_CPU, blob_deleter, NULL);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ops_tensor_share_memory_(t), OPS_OK);
    ck_assert_int_eq(g_blob_deleted, 1); /* the borrowed bytes were given back */
    ck_assert_ptr_ne(ops_tensor_data_ptr(t), buf);
    ck_assert(((const float *)ops_tensor_data_ptr(t))[5] == 6.0f);
    ops_tensor_release(t);
    ck_assert_int_eq(g_blob_deleted, 1);
    ck_assert_int_eq(count_segments(getpid()), 0);

    /* A zero-byte storage is shared too. */
    t = ops_tensor_new("test", 1, (int64_t[]){0}, NULL, OPS_INT64, OPS_DEVICE_CPU);
    ck_assert_int_eq(ops_tensor_share_memory_(t), OPS_OK);
    ck_assert(ops_tensor_is_shared(t));
    ops_tensor_release(t);
    ck_assert_int_eq(count_segments(getpid()), 0);
}
END_TEST

START_TEST(test_shm_allocator)
{
    const ops_allocator *a = ops_shm_allocator();
    ck_assert_str_eq(a->name, "shm");
    char *p = a->alloc(a->ctx, 1000);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % 64, 0);
    memset(p, 7, 1000);
    ck_assert_int_eq(count_segments(getpid()), 1);
    a->free(a->ctx, p, 1000);
    ck_assert_int_eq(count_segments(getpid()), 0);
    a->free(a->ctx, NULL, 0);
}
END_TEST

START_TEST(test_handle_string)
{
    ops_shm_handle h, g;
    memset(&h, 0, sizeof h);
    strcpy(h.name, "/libops_123_7");
    h.nbytes = 4096;
    h.dtype = OPS_BFLOAT16;
    h.ndim = 3;
    int64_t sizes[] = {2, 3, 4}, strides[] = {1, 24, 6};
    memcpy(h.sizes, sizes, sizeof sizes);
    memcpy(h.strides, strides, sizeof strides);
    h.offset = 5;
    char buf[OPS_SHM_HANDLE_STR_MAX];
    ck_assert_int_eq(ops_shm_handle_to_string(&h, buf, sizeof buf), OPS_OK);
    ck_assert_str_eq(buf, "libops-shm:1:/libops_123_7:4096:bfloat16:2,3,4:1,24,6:5");
    ck_assert_int_eq(ops_shm_handle_from_string(buf, &g), OPS_OK);
    ck_assert_int_eq(memcmp(&g, &h, sizeof h), 0);
    /* Too small a buffer: refused, left empty. */
    ck_assert_int_eq(ops_shm_handle_to_string(&h, buf, 20), OPS_ERR_VALUE);
    ck_assert_str_eq(buf, "");
    /* A name that would not survive the round trip. */
    strcpy(g.name, "/libops:1");
    ck_assert_int_eq(ops_shm_handle_to_string(&g, buf, sizeof buf), OPS_ERR_VALUE);
    /* 0-dim. */
    h.ndim = 0;
    ck_assert_int_eq(ops_shm_handle_to_string(&h, buf, sizeof buf), OPS_OK);
    ck_assert_str_eq(buf, "libops-shm:1:/libops_123_7:4096:bfloat16:::5");
    ck_assert_int_eq(ops_shm_handle_from_string(buf, &g), OPS_OK);
    ck_assert_int_eq(g.ndim, 0);

    static const char *const bad[] = {
        "",
        "libops-shm:2:/libops_1_1:8:float32:2:1:0",
        "libops-shm:1:libops_1_1:8:float32:2:1:0", /* no leading '/' */
        "libops-shm:1:/libops_1_1:-8:float32:2:1:0",
        "libops-shm:1:/libops_1_1:8:float99:2:1:0",
        "libops-shm:1:/libops_1_1:8:float32:2,3:1:0", /* strides and sizes differ */
        "libops-shm:1:/libops_1_1:8:float32:2:1:0x",
        "libops-shm:1:/libops_1_1:8:float32:2:1",
        "libops-shm:1:/libops_1_1:8:float32:1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1:1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1:0",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(ops_shm_handle_from_string(bad[i], &g) == OPS_ERR_VALUE, "accepted \"%s\"", bad[i]);
        ck_assert_ptr_nonnull(strstr(ops_last_error(), "shm_handle_from_string"));
    }
}
END_TEST

START_TEST(test_open_in_same_process)
{
    ops_tensor *t = arange_f32(24);
    ck_assert_int_eq(ops_tensor_share_memory_(t), OPS_OK);
    /* A transposed [4, 3] view of t[0:12] at offset 12. */
    ops_tensor *v = ops_tensor_new_view(t, 2, (int64_t[]){4, 3}, (int64_t[]){1, 4}, 12);
    ops_shm_handle h;
    ck_assert_int_eq(ops_tensor_shm_handle(v, &h), OPS_OK);
    char text[OPS_SHM_HANDLE_STR_MAX];
    ck_assert_int_eq(ops_shm_handle_to_string(&h, text, sizeof text), OPS_OK);
    ops_shm_handle g;
    ck_assert_int_eq(ops_shm_handle_from_string(text, &g), OPS_OK);
    ops_tensor *r = ops_tensor_from_shm_handle(&g);
    ck_assert_ptr_nonnull(r);
    ck_assert(ops_tensor_is_shared(r));
    ck_assert_int_eq(ops_tensor_ndim(r), 2);
    ck_assert_int_eq(ops_tensor_strides(r)[1], 4);
    ck_assert_int_eq(ops_tensor_storage_offset(r), 12);
    ck_assert_uint_eq(ops_tensor_storage_nbytes(r), 24 * sizeof(float));
    ck_assert_ptr_ne(ops_tensor_data_ptr(r), ops_tensor_data_ptr(v)); /* its own mapping */
    float *pr = ops_tensor_data_ptr(r), *pt = ops_tensor_data_ptr(t);
    ck_assert(pr[2 * 1 + 1 * 4] == 18.0f); /* r[2, 1] = t[12 + 2 + 4] */
    pr[0] = -5.0f;
    ck_assert(pt[12] == -5.0f);
    pt[23] = 99.0f;
    ck_assert(pr[3 * 1 + 2 * 4] == 99.0f);
    /* The receiver's handle names the same segment. */
    ops_shm_handle h2;
    ck_assert_int_eq(ops_tensor_shm_handle(r, &h2), OPS_OK);
    ck_assert_str_eq(h2.name, h.name);

    /* The creator lets go: the name goes at once, the receiver's mapping stays. */
    ops_tensor_release(v);
    ops_tensor_release(t);
    ck_assert_int_eq(count_segments(getpid()), 0);
    ck_assert(pr[0] == -5.0f);
    pr[1] = 1.5f;
    ck_assert(ops_tensor_from_shm_handle(&g) == NULL); /* nothing to open any more */
    ck_assert_int_eq(ops_last_status(), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "from_shm_handle: cannot open shared memory"));
    ops_tensor_release(r);
}
END_TEST

START_TEST(test_errors)
{
    ck_assert_int_eq(ops_tensor_share_memory_(NULL), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "share_memory_"));
    ck_assert(!ops_tensor_is_shared(NULL));
    ck_assert_ptr_null(ops_tensor_from_shm_handle(NULL));

    ops_tensor *t = arange_f32(8);
    ops_shm_handle h;
    ck_assert_int_eq(ops_tensor_shm_handle(t, &h), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "call share_memory_ first"));

    /* Allocation failure: the tensor stays as it was. */
    void *before = ops_tensor_data_ptr(t);
    ops_alloc_fail_nth(1);
    ck_assert_int_eq(ops_tensor_share_memory_(t), OPS_ERR_OOM);
    ops_alloc_fail_nth(0);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "share_memory_: out of memory"));
    ck_assert(!ops_tensor_is_shared(t));
    ck_assert_ptr_eq(ops_tensor_data_ptr(t), before);
    ck_assert_int_eq(count_segments(getpid()), 0);

    ck_assert_int_eq(ops_tensor_share_memory_(t), OPS_OK);
    ck_assert_int_eq(ops_tensor_shm_handle(t, &h), OPS_OK);
    ops_shm_handle b = h;
    b.sizes[0] = 9; /* one element past the storage */
    ck_assert_ptr_null(ops_tensor_from_shm_handle(&b));
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "does not fit a storage of 32 bytes"));
    b = h;
    b.offset = -1;
    ck_assert_ptr_null(ops_tensor_from_shm_handle(&b));
    b = h;
    b.strides[0] = -1;
    ck_assert_ptr_null(ops_tensor_from_shm_handle(&b));
    b = h;
    b.nbytes = 64; /* the segment holds 32 */
    b.sizes[0] = 16;
    ck_assert_ptr_null(ops_tensor_from_shm_handle(&b));
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "expected"));
    b = h;
    strcpy(b.name, "/not_ours");
    ck_assert_ptr_null(ops_tensor_from_shm_handle(&b));
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "is not the name of a libops segment"));
    b = h;
    b.dtype = (ops_dtype)42;
    ck_assert_ptr_null(ops_tensor_from_shm_handle(&b));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_DTYPE);

    /* A segment of the right name and size that libops did not write. */
    char name[64];
    snprintf(name, sizeof name, "/libops_%ld_bogus", (long)getpid());
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, 64 + 32), 0);
    close(fd);
    b = h;
    strcpy(b.name, name);
    ck_assert_ptr_null(ops_tensor_from_shm_handle(&b));
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "is not a libops segment"));
    shm_unlink(name);

    /* Fault injection through a successful open: every failure unmaps. */
    for (int64_t n = 1; n < 10; n++) {
        ops_alloc_fail_nth(n);
        ops_tensor *r = ops_tensor_from_shm_handle(&h);
        ops_alloc_fail_nth(0);
        if (r) {
            ck_assert(((const float *)ops_tensor_data_ptr(r))[7] == 7.0f);
            ops_tensor_release(r);
            break;
        }
        ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
        ck_assert_ptr_nonnull(strstr(ops_last_error(), "from_shm_handle"));
    }
    ops_tensor_release(t);
    ck_assert_int_eq(count_segments(getpid()), 0);
}
END_TEST

START_TEST(test_two_processes)
{
    ops_tensor *t = arange_f32(N);
    ck_assert_int_eq(ops_tensor_share_memory_(t), OPS_OK);
    ops_shm_handle h;
    char text[OPS_SHM_HANDLE_STR_MAX];
    ck_assert_int_eq(ops_tensor_shm_handle(t, &h), OPS_OK);
    ck_assert_int_eq(ops_shm_handle_to_string(&h, text, sizeof text), OPS_OK);
    float *p = ops_tensor_data_ptr(t);

    child c = spawn_helper("open", text);
    child_expect(&c, "written");
    ck_assert(values_are(p, 1, 1000)); /* the child's writes, seen here */
    for (int i = 0; i < N; i++)
        p[i] = (float)-i;
    child_send(&c, "check");
    child_expect(&c, "seen"); /* ours, seen there */
    int status = child_finish(&c);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    /* A receiver killed while it holds the mapping changes nothing here. */
    for (int i = 0; i < N; i++)
        p[i] = (float)i;
    c = spawn_helper("open", text);
    child_expect(&c, "written");
    status = child_kill(&c);
    ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    ck_assert(values_are(p, 1, 1000));
    ck_assert_int_eq(count_segments(getpid()), 1);
    ops_tensor_release(t);
    ck_assert_int_eq(count_segments(getpid()), 0);
}
END_TEST

START_TEST(test_creator_killed)
{
    child c = spawn_helper("create", NULL);
    char line[OPS_SHM_HANDLE_STR_MAX];
    ck_assert(read_line(c.out, line, sizeof line));
    ops_shm_handle h;
    ck_assert_msg(ops_shm_handle_from_string(line, &h) == OPS_OK, "helper said \"%s\"", line);
    ck_assert_int_eq(count_segments(c.pid), 1);
    ops_tensor *r = ops_tensor_from_shm_handle(&h);
    ck_assert_ptr_nonnull(r);
    float *p = ops_tensor_data_ptr(r);
    ck_assert(values_are(p, 1, 0));
    for (int i = 0; i < N; i++)
        p[i] = (float)-i;
    child_send(&c, "check");
    child_expect(&c, "seen");

    const pid_t creator = c.pid;
    int status = child_kill(&c);
    ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    /* Its janitor unlinks the name; our mapping lives on. */
    ck_assert_int_eq(wait_segments_gone(creator), 0);
    ck_assert(values_are(p, -1, 0));
    p[0] = 3.0f;
    ck_assert(ops_tensor_from_shm_handle(&h) == NULL);
    ops_tensor_release(r);
}
END_TEST

START_TEST(test_creator_exits)
{
    child c = spawn_helper("create", NULL);
    char line[OPS_SHM_HANDLE_STR_MAX];
    ck_assert(read_line(c.out, line, sizeof line));
    ops_shm_handle h;
    ck_assert_int_eq(ops_shm_handle_from_string(line, &h), OPS_OK);
    ops_tensor *r = ops_tensor_from_shm_handle(&h);
    ck_assert_ptr_nonnull(r);
    const pid_t creator = c.pid;
    int status = child_finish(&c);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* It released its tensor, which unlinked the name synchronously. */
    ck_assert_int_eq(count_segments(creator), 0);
    ck_assert(values_are(ops_tensor_data_ptr(r), 1, 0));
    ops_tensor_release(r);
}
END_TEST

/* fork() without exec: the child inherits the parent's shared storage, and
 * releasing it there only unmaps (the name is the parent's); a segment the child
 * creates and never frees is removed by the child's own janitor when it exits. */
START_TEST(test_fork_child)
{
    ops_tensor *t = arange_f32(N);
    ck_assert_int_eq(ops_tensor_share_memory_(t), OPS_OK);
    const pid_t parent = getpid();
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        float *p = ops_tensor_data_ptr(t);
        p[0] = 42.0f; /* MAP_SHARED: the parent sees it */
        ops_tensor_release(t);
        int code = count_segments(parent) == 1 ? 0 : 10;
        ops_tensor *u = arange_f32_or_null(N);
        if (u == NULL || ops_tensor_share_memory_(u) != OPS_OK)
            code = 11;
        else if (count_segments(getpid()) != 1)
            code = 12;
        _exit(code); /* u is never released: its name is the janitor's to remove */
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    ck_assert(((const float *)ops_tensor_data_ptr(t))[0] == 42.0f);
    ck_assert_int_eq(count_segments(parent), 1);
    ck_assert_int_eq(wait_segments_gone(pid), 0);
    ops_tensor_release(t);
    ck_assert_int_eq(count_segments(parent), 0);
}
END_TEST

/* ---- what another process can do to a segment ------------------------------------- */

/* The segment header's layout (runtime/interop/shm.c), as a process that maps the
 * segment sees it: anyone who can open the name can write it. */
typedef struct seg_header {
    char magic[8];
    uint64_t nbytes;
    int32_t creator;
    char name[OPS_SHM_NAME_MAX - 20];
} seg_header;

static bool
segment_exists(const char *name)
{
    int fd = shm_open(name, O_RDONLY, 0);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

/* The creator unmaps and unlinks what its own memory says, not what the shared
 * header says: rewriting the header (another segment's name, a huge size) must
 * neither unlink that other segment nor unmap memory that is not the segment. */
START_TEST(test_header_tampering_is_ignored)
{
    char victim[40];
    snprintf(victim, sizeof victim, "/libops_%ld_victim", (long)getpid());
    int fd = shm_open(victim, O_RDWR | O_CREAT | O_EXCL, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
    for (int kind = 0; kind < 2; kind++) { /* share_memory_, then the allocator */
        ops_tensor *t = NULL;
        char *data;
        const ops_allocator *a = ops_shm_allocator();
        if (kind == 0) {
            t = arange_f32(8);
            ck_assert_int_eq(ops_tensor_share_memory_(t), OPS_OK);
            data = ops_tensor_data_ptr(t);
        } else {
            data = a->alloc(a->ctx, 32);
            ck_assert_ptr_nonnull(data);
        }
        ck_assert_int_eq(count_segments(getpid()), 2);
        char own[OPS_SHM_NAME_MAX];
        memcpy(own, ((seg_header *)(data - 64))->name, sizeof ((seg_header *)0)->name);
        ck_assert(segment_exists(own));
        /* A receiver mapped before the tampering keeps its own record too. */
        ops_shm_handle h = {0};
        ops_tensor *r = NULL;
        if (kind == 0) {
            ck_assert_int_eq(ops_tensor_shm_handle(t, &h), OPS_OK);
            r = ops_tensor_from_shm_handle(&h);
            ck_assert_ptr_nonnull(r);
        }
        seg_header *sh = (seg_header *)(data - 64);
        snprintf(sh->name, sizeof sh->name, "%s", victim);
        sh->nbytes = (uint64_t)1 << 44;
        sh->creator = (int32_t)getpid();
        if (kind == 0) {
            ops_shm_handle g;
            ck_assert_int_eq(ops_tensor_shm_handle(t, &g), OPS_OK);
            ck_assert_str_eq(g.name, own); /* not the victim */
            ck_assert_int_eq(ops_tensor_shm_handle(r, &g), OPS_OK);
            ck_assert_str_eq(g.name, own);
            ops_tensor_release(r);
            ops_tensor_release(t);
        } else {
            a->free(a->ctx, data, 32);
        }
        ck_assert_msg(segment_exists(victim), "releasing a tampered segment unlinked %s", victim);
        ck_assert(!segment_exists(own));
        ck_assert_int_eq(count_segments(getpid()), 1);
        /* The memory around stays mapped: a fresh allocation and a write work. */
        ops_tensor *u = arange_f32(1 << 16);
        ck_assert(((const float *)ops_tensor_data_ptr(u))[65535] == 65535.0f);
        ops_tensor_release(u);
    }
    shm_unlink(victim);
}
END_TEST

/* Names are drawn at random (64 bits after the pid), so another user cannot
 * create them first; segments are mode 0600. */
START_TEST(test_names_unpredictable)
{
    ops_tensor *a = arange_f32(4), *b = arange_f32(4);
    ck_assert_int_eq(ops_tensor_share_memory_(a), OPS_OK);
    ck_assert_int_eq(ops_tensor_share_memory_(b), OPS_OK);
    ops_shm_handle ha, hb;
    ck_assert_int_eq(ops_tensor_shm_handle(a, &ha), OPS_OK);
    ck_assert_int_eq(ops_tensor_shm_handle(b, &hb), OPS_OK);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "/libops_%ld_", (long)getpid());
    const ops_shm_handle *hs[] = {&ha, &hb};
    for (int i = 0; i < 2; i++) {
        const char *name = hs[i]->name;
        ck_assert_int_eq(strncmp(name, prefix, strlen(prefix)), 0);
        const char *r = name + strlen(prefix);
        ck_assert_msg(strlen(r) == 16 && strspn(r, "0123456789abcdef") == 16, "name %s", name);
        /* Only this user may open it. */
        char path[96];
        snprintf(path, sizeof path, "/dev/shm%s", name);
        struct stat st;
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_int_eq(st.st_mode & 0777, 0600);
        ck_assert_int_eq(st.st_uid, geteuid());
    }
    ck_assert_str_ne(ha.name, hb.name);
    /* Sequential names would differ in the last digit only. */
    ck_assert_int_ne(memcmp(ha.name, hb.name, strlen(ha.name) - 2), 0);
    ops_tensor_release(a);
    ops_tensor_release(b);
    ck_assert_int_eq(count_segments(getpid()), 0);
}
END_TEST

/* A segment named like ours that another user owns, or that others may write,
 * is refused: whoever can write it could truncate it under us. */
START_TEST(test_foreign_segment_refused)
{
    char name[64];
    snprintf(name, sizeof name, "/libops_%ld_foreign", (long)getpid());
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, 64 + 32), 0);
    seg_header *sh = mmap(NULL, 64 + 32, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ck_assert_ptr_ne(sh, MAP_FAILED);
    memcpy(sh->magic, "LIBOPSM1", 8); /* a well-formed header */
    sh->nbytes = 32;
    munmap(sh, 64 + 32);
    ops_shm_handle h = {0};
    snprintf(h.name, sizeof h.name, "%s", name);
    h.nbytes = 32;
    h.dtype = OPS_FLOAT32;
    h.ndim = 1;
    h.sizes[0] = 8;
    h.strides[0] = 1;
    ck_assert_int_eq(fchmod(fd, 0666), 0);
    ck_assert_ptr_null(ops_tensor_from_shm_handle(&h));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "mode 666"));
    if (geteuid() == 0) { /* root can give it away to another user */
        ck_assert_int_eq(fchmod(fd, 0600), 0);
        ck_assert_int_eq(fchown(fd, 65534, (gid_t)-1), 0);
        ck_assert_ptr_null(ops_tensor_from_shm_handle(&h));
        ck_assert_ptr_nonnull(strstr(ops_last_error(), "belongs to uid 65534"));
        ck_assert_int_eq(fchown(fd, 0, (gid_t)-1), 0);
    }
    ck_assert_int_eq(fchmod(fd, 0600), 0); /* now it is one of ours */
    ops_tensor *t = ops_tensor_from_shm_handle(&h);
    ck_assert_ptr_nonnull(t);
    ops_tensor_release(t);
    close(fd);
    shm_unlink(name);
}
END_TEST

/* A segment truncated by some process is detected when it is opened (mapping it
 * would SIGBUS on the first access past the new end). */
START_TEST(test_truncated_segment_refused)
{
    ops_tensor *t = arange_f32(N);
    ck_assert_int_eq(ops_tensor_share_memory_(t), OPS_OK);
    ops_shm_handle h;
    ck_assert_int_eq(ops_tensor_shm_handle(t, &h), OPS_OK);
    int fd = shm_open(h.name, O_RDWR, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, 64 + 16), 0);
    ck_assert_ptr_null(ops_tensor_from_shm_handle(&h));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "has 80 bytes, expected 4064"));
    /* Give the creator its pages back before it touches them again. */
    ck_assert_int_eq(ftruncate(fd, 64 + N * sizeof(float)), 0);
    close(fd);
    ops_tensor *r = ops_tensor_from_shm_handle(&h);
    ck_assert_ptr_nonnull(r);
    ops_tensor_release(r);
    ops_tensor_release(t);
}
END_TEST

/* Every failure point of share_memory_ (the segment, its mapping) and of
 * opening a handle, failing in turn: a clean error, the tensor as it was, no
 * segment left behind. */
START_TEST(test_fault_injection)
{
    for (int large = 0; large < 2; large++) {
        ops_tensor *t = arange_f32(large ? 100000 : 8);
        void *before = ops_tensor_data_ptr(t);
        bool ok = false;
        int64_t n;
        for (n = 1; n < 20 && !ok; n++) {
            ops_alloc_fail_nth(n);
            ops_status st = ops_tensor_share_memory_(t);
            ops_alloc_fail_nth(0);
            if (st == OPS_OK) {
                ok = true;
                break;
            }
            ck_assert_int_eq(st, OPS_ERR_OOM);
            ck_assert_ptr_nonnull(strstr(ops_last_error(), "share_memory_"));
            ck_assert(!ops_tensor_is_shared(t));
            ck_assert_ptr_eq(ops_tensor_data_ptr(t), before);
            ck_assert_int_eq(count_segments(getpid()), 0);
        }
        ck_assert(ok);
        ck_assert_int_ge(n, 3); /* the segment and its mapping both failed once */
        ck_assert(((const float *)ops_tensor_data_ptr(t))[7] == 7.0f);
        ops_shm_handle h;
        ck_assert_int_eq(ops_tensor_shm_handle(t, &h), OPS_OK);
        ok = false;
        for (n = 1; n < 20 && !ok; n++) {
            ops_alloc_fail_nth(n);
            ops_tensor *r = ops_tensor_from_shm_handle(&h);
            ops_alloc_fail_nth(0);
            if (r != NULL) {
                ok = true;
                ck_assert(((const float *)ops_tensor_data_ptr(r))[7] == 7.0f);
                ops_tensor_release(r);
                break;
            }
            ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
            ck_assert_ptr_nonnull(strstr(ops_last_error(), "from_shm_handle"));
        }
        ck_assert(ok);
        ck_assert_int_ge(n, 3);
        ops_tensor_release(t);
        ck_assert_int_eq(count_segments(getpid()), 0);
    }
    /* The allocator itself. */
    const ops_allocator *a = ops_shm_allocator();
    for (int64_t n = 1; n <= 2; n++) {
        ops_alloc_fail_nth(n);
        ck_assert_ptr_null(a->alloc(a->ctx, 100));
        ops_alloc_fail_nth(0);
        ck_assert_int_eq(count_segments(getpid()), 0);
    }
}
END_TEST

static Suite *
shm_suite(void)
{
    Suite *s = suite_create("shm");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_share_in_place);
    tcase_add_test(tc, test_share_large_and_borrowed);
    tcase_add_test(tc, test_shm_allocator);
    tcase_add_test(tc, test_handle_string);
    tcase_add_test(tc, test_open_in_same_process);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_two_processes);
    tcase_add_test(tc, test_creator_killed);
    tcase_add_test(tc, test_creator_exits);
    tcase_add_test(tc, test_fork_child);
    tcase_add_test(tc, test_header_tampering_is_ignored);
    tcase_add_test(tc, test_names_unpredictable);
    tcase_add_test(tc, test_foreign_segment_refused);
    tcase_add_test(tc, test_truncated_segment_refused);
    tcase_add_test(tc, test_fault_injection);
    suite_add_tcase(s, tc);
    return s;
}

int
main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--helper") == 0)
        return helper_main(argc, argv);
    const time_t start = time(NULL);
    SRunner *sr = srunner_create(shm_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    /* Every test process (Check forks one per test) and every helper has exited,
     * so no segment made during this run may remain: look for any whose creator
     * is gone, giving the janitors time to run. */
    int leaked = 0;
    for (int i = 0; i < 500; i++) {
        leaked = orphan_segments(start);
        if (leaked == 0)
            break;
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    if (leaked) {
        fprintf(stderr, "test_shm: %d libops segment(s) left in /dev/shm by exited processes\n", leaked);
        failed++;
    }
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
