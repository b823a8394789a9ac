/* Zero-copy safetensors open: the cost of ops_safetensors_load (map, parse and validate
 * the header, make one view per tensor) per tensor, for two files with the same number
 * of tensors and sizes 64x apart: the work is per tensor, not per byte, so the figures
 * match.  Then the first full read of the big file's values (after its pages are
 * dropped from the page cache when the kernel allows, so from disk; then again warm).
 *
 *   bench bench_serialize [MiB (default 1024)] [tensors (default 4096)] [dir (default /tmp)]
 *
 * The files are written here with their bytes (not sparse) and removed at the end. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "ops_serialize.h"

#define PROG "bench_serialize"

/* n float32 tensors of `per` bytes each (rows x 256), named like a model's layers. */
static void
write_file(const char *path, int64_t n, int64_t per)
{
    size_t cap = (size_t)n * 128 + 64, len = 1;
    char *h = malloc(cap);
    h[0] = '{';
    int64_t rows = per / (256 * 4);
    for (int64_t i = 0; i < n; i++)
        len += (size_t)snprintf(h + len, cap - len,
                                "%s\"model.layers.%" PRId64 ".weight\":{\"dtype\":\"F32\",\"shape\":[%" PRId64
                                ",256],\"data_offsets\":[%" PRId64 ",%" PRId64 "]}",
                                i ? "," : "", i, rows, i * per, (i + 1) * per);
    h[len++] = '}';
    while ((8 + len) % 8)
        h[len++] = ' ';
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        perror(path);
        exit(1);
    }
    uint64_t hl = len;
    unsigned char l8[8];
    for (int k = 0; k < 8; k++)
        l8[k] = (unsigned char)(hl >> (8 * k));
    fwrite(l8, 1, 8, f);
    fwrite(h, 1, len, f);
    float *chunk = malloc((size_t)per);
    for (int64_t j = 0; j < per / 4; j++)
        chunk[j] = (float)(j % 1000) * 0.001f;
    for (int64_t i = 0; i < n; i++)
        if (fwrite(chunk, 1, (size_t)per, f) != (size_t)per) {
            perror("write");
            exit(1);
        }
    if (fclose(f) != 0) {
        perror("close");
        exit(1);
    }
    free(chunk);
    free(h);
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median seconds of load + free over reps. */
static double
time_open(const char *path, int reps, int64_t *ntensors)
{
    double t[64];
    for (int r = 0; r < reps; r++) {
        ops_tensor_dict *d = NULL;
        double t0 = bench_now();
        if (ops_safetensors_load(path, &d) != OPS_OK)
            bench_die(PROG, "ops_safetensors_load");
        *ntensors = ops_tensor_dict_size(d);
        ops_tensor_dict_free(d);
        t[r] = bench_now() - t0;
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    return t[reps / 2];
}

/* Sum every value of every tensor (the first touch of each page reads the file); eight
 * accumulators so that the adds are not the bottleneck. */
static double
read_all(const ops_tensor_dict *d, double *sum)
{
    double t0 = bench_now(), s = 0;
    for (int64_t i = 0; i < ops_tensor_dict_size(d); i++) {
        const ops_tensor *t = ops_tensor_dict_tensor(d, i);
        const float *p = ops_tensor_data_ptr(t);
        float acc[8] = {0};
        int64_t n = ops_tensor_numel(t), k = 0;
        for (; k + 8 <= n; k += 8)
            for (int j = 0; j < 8; j++)
                acc[j] += p[k + j];
        for (; k < n; k++)
            acc[0] += p[k];
        for (int j = 0; j < 8; j++)
            s += acc[j];
    }
    *sum = s;
    return bench_now() - t0;
}

/* The baseline: read(2) of the whole file in 1 MiB chunks. */
static double
read_plain(const char *path)
{
    int fd = open(path, O_RDONLY);
    char *buf = malloc(1 << 20);
    double t0 = bench_now();
    while (read(fd, buf, 1 << 20) > 0) {
    }
    double t = bench_now() - t0;
    close(fd);
    free(buf);
    return t;
}

static void
drop_pages(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        fdatasync(fd);
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
    }
}

int
main(int argc, char **argv)
{
    int64_t mib = argc > 1 ? atoll(argv[1]) : 1024;
    int64_t n = argc > 2 ? atoll(argv[2]) : 4096;
    const char *dir = argc > 3 ? argv[3] : "/tmp";
    int64_t per_big = mib * 1024 * 1024 / n / 1024 * 1024, per_small = per_big / 64 / 1024 * 1024;
    if (per_small < 1024)
        per_small = 1024;
    char big[512], small[512];
    snprintf(big, sizeof big, "%s/ops_bench_big_%ld.safetensors", dir, (long)getpid());
    snprintf(small, sizeof small, "%s/ops_bench_small_%ld.safetensors", dir, (long)getpid());
    double tw = bench_now();
    write_file(big, n, per_big);
    write_file(small, n, per_small);
    tw = bench_now() - tw;
    printf("%s: %" PRId64 " float32 tensors; files of %.1f MiB and %.1f MiB written in %.1f s\n", PROG, n,
           (double)(n * per_big) / (1 << 20), (double)(n * per_small) / (1 << 20), tw);

    int64_t nt = 0;
    time_open(big, 3, &nt); /* warm the header's pages and the allocator */
    double ob = time_open(big, 21, &nt), os = time_open(small, 21, &nt);
    printf("  open (load + free), median of 21: %.2f ms big, %.2f ms small = %.2f us / %.2f us per tensor "
           "(size ratio 64x, time ratio %.2fx)\n",
           ob * 1e3, os * 1e3, ob * 1e6 / (double)nt, os * 1e6 / (double)nt, ob / os);

    /* First full read: drop the file's pages first (they were just written) when the
     * kernel lets us, so the first pass reads the disk; read(2) of the same file, cold
     * and warm, is the baseline. */
    double gib = (double)(n * per_big) / (1 << 30);
    drop_pages(big);
    double pc = read_plain(big), pw = read_plain(big);
    drop_pages(big);
    ops_tensor_dict *d = NULL;
    if (ops_safetensors_load(big, &d) != OPS_OK)
        bench_die(PROG, "ops_safetensors_load");
    double sum1, sum2;
    double r1 = read_all(d, &sum1), r2 = read_all(d, &sum2);
    printf("  first full read of the mapped tensors: %.2f GiB/s cold, %.2f GiB/s warm; read(2) of the file: "
           "%.2f GiB/s cold, %.2f GiB/s warm; sums %s\n",
           gib / r1, gib / r2, gib / pc, gib / pw, sum1 == sum2 ? "agree" : "DIFFER");
    ops_tensor_dict_free(d);
    unlink(big);
    unlink(small);
    return sum1 == sum2 ? 0 : 1;
}
