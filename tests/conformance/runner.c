/* Every op against NumPy, driven by the schema (docs/conformance.md).
 *
 *     conformance CASES.bin [--op NAME] [--dtype DTYPE] [--coverage] [--seed N]
 *
 * tests/conformance/gen_cases.py wrote the cases at build time: for each op and dtype,
 * the arguments and the value NumPy computed (or the error expected).  This runner
 * calls each op through the boxed registry and runs the families of checks below on
 * every case; expected values never come from libops.
 *
 *   values     dtype, shape and values against NumPy: rtol/atol per dtype, NaN, the sign
 *              of infinities and of zeros, and the NMSE of the case (ggml's metric);
 *   layouts    the same with every tensor input strided, transposed, expanded (stride
 *              0, broadcast dims and extra outer/inner dims) and, in the property run,
 *              in random layouts drawn from --seed;
 *   out=       into an empty out (resized), a NaN-filled one, strided and transposed
 *              ones (their strides kept); a wrongly shaped out, an out the result
 *              cannot be cast to and an out overlapping itself are errors that write
 *              nothing;
 *   in-place   same storage, version bumped, strided self; an unsafe cast, a self
 *              that would need broadcasting and an expanded self are errors;
 *   errors     undeclared dtypes and the metadata's `errors:` fail with the expected
 *              message, in every form, leaving inputs and out= byte-identical;
 *   guards     every tensor the runner makes lives in a buffer of sentinel bytes
 *              (before, after, and in the gaps of strided layouts): an op must not
 *              write outside its output, nor into its inputs at all;
 *   faults     every allocation of the call failed in turn (ops_alloc_fail_nth) gives
 *              a clean out-of-memory error and leaves inputs and outputs untouched;
 *   gradients  for an op with a formula in ops/derivatives.yaml: ops_gradcheck and
 *              ops_gradgradcheck (backward and double backward against finite
 *              differences) on the case's inputs in float64, contiguous and transposed,
 *              each element of a Tensor[] input an input of its own, once per floating
 *              output (every return, every element of a Tensor[] return: the others
 *              get the engine's zeros); a full run fails when some formula had no
 *              gradient run;
 *   CUDA       with a CUDA build and a device, the case again on cuda:0, compared with
 *              the CPU result; otherwise counted as skipped.
 *
 * --values leaves out the fault injection: tests/conformance/cpu_levels.py runs the
 * rest once per CPU instruction-set level the machine has (OPS_CPU_CAPABILITY), so the
 * vector loops of every level meet the same cases (docs/cpu-dispatch.md).
 *
 * A full run (no --op or --dtype) also fails when some registry entry had no
 * conformance run; --coverage lists those entries. */
#include "runner.h"

/* ---- run state (declared in runner.h) -------------------------------------------- */

case_file cf;
int *selected;
int nselected;
uint64_t runner_seed = 1;
bool runner_values_only = false;

int nregistry;
bool *covered;               /* by by_ptr's index: a checked call of the entry ran */
const ops_op_info **by_ptr; /* registry entries sorted by address */

run_counts counts;
bool *grad_checked;  /* by formula entry: some gradcheck ran */
bool *grad_eligible; /* by formula entry: the selection has a value case of its op */
bool *no_formula;    /* by by_ptr index: differentiable (a floating result from an input
                      * requiring grad) but no formula in ops/derivatives.yaml */
bool *has_f64_case;  /* by by_ptr's index: the op has a float64 value case */
const char *cuda_skip_reason;
bool *cuda_missing; /* by by_ptr index: some call found no CUDA kernel */
bool backend_only;  /* --backend cuda: only the CUDA family (and the CPU calls it needs) */

int
cmp_ptr(const void *a, const void *b)
{
    /* addresses of distinct objects compare as integers, not as pointers */
    const uintptr_t x = (uintptr_t) * (const ops_op_info *const *)a, y = (uintptr_t) * (const ops_op_info *const *)b;
    return x < y ? -1 : x > y;
}

/* covered[] slot of a registry entry (by_ptr's order), or NULL. */
static bool *
coverage_slot(const ops_op_info *op)
{
    const ops_op_info **hit = bsearch(&op, by_ptr, (size_t)nregistry, sizeof *by_ptr, cmp_ptr);
    return hit != NULL ? &covered[hit - by_ptr] : NULL;
}

void
mark(const ops_op_info *op)
{
    bool *slot = coverage_slot(op);
    if (slot != NULL)
        *slot = true;
}

START_TEST(test_case_run)
{
    const int ci = selected[_i];
    const test_case *c = &cf.cases[ci];
    owned_free_all(); /* what a failed case before this one left */
    if (backend_only) {
        run_backend(c);
        return;
    }
    if (c->flags & F_ERROR) {
        run_error(c);
        cuda_error(c);
        return;
    }
    run_primary(c);
    if (c->op->kind != OPS_KIND_FUNCTIONAL)
        return;
    if (c->flags & F_LAYOUTS)
        run_layouts(c, ci);
    if (c->flags & F_VARIANTS) {
        if (c->op->out)
            run_out(c, ci);
        if (c->op->inplace)
            run_inplace(c, ci);
    }
    run_gradients(c);
    run_formula_probe(c);
}
END_TEST

/* ---- command line, coverage, summary ------------------------------------------------ */

static const char *base_name(const char *name, char *buf, size_t n);

/* The ops that found no CUDA kernel, against the documented exceptions (a Markdown
 * table whose rows start "| `name` |", docs/cuda-exceptions.md): in a full run an op
 * missing from the table, or a listed op that has a kernel now, is a failure.
 * Returns the number of such failures. */
static int
cuda_report(const char *exceptions_path, bool full)
{
    char *listed = calloc((size_t)nregistry + 1, 1);
    int bad = 0, missing = 0;
    FILE *f = exceptions_path ? fopen(exceptions_path, "r") : NULL;
    if (exceptions_path && f == NULL) {
        printf("conformance: cannot read %s\n", exceptions_path);
        bad++;
    }
    char line[1024];
    while (f && fgets(line, sizeof line, f)) {
        char name[128];
        if (sscanf(line, "| `%127[^`]` |", name) != 1)
            continue;
        bool found = false;
        char b[128];
        for (int r = 0; r < nregistry; r++) {
            char full[256]; /* name.overload, as the table may name one overload */
            snprintf(full, sizeof full, "%s%s%s", by_ptr[r]->name, by_ptr[r]->overload[0] ? "." : "",
                     by_ptr[r]->overload);
            if (strcmp(base_name(by_ptr[r]->name, b, sizeof b), name) == 0 || strcmp(by_ptr[r]->name, name) == 0 ||
                strcmp(full, name) == 0) {
                listed[r] = 1;
                found = true;
            }
        }
        if (!found) {
            printf("conformance: %s lists '%s', which is not an op\n", exceptions_path, name);
            bad++;
        }
    }
    if (f)
        fclose(f);
    for (int r = 0; r < nregistry; r++) {
        if (!cuda_missing[r])
            continue;
        const ops_op_info *e = by_ptr[r];
        if (missing++ == 0)
            printf("conformance: ops without a CUDA kernel:");
        printf(" %s%s%s%s", e->name, e->overload[0] ? "." : "", e->overload, listed[r] ? "" : " (not in the exceptions)");
        if (full && exceptions_path && !listed[r])
            bad++;
    }
    if (missing)
        printf("\n");
    free(listed);
    return bad;
}

static void
usage(void)
{
    fprintf(stderr, "usage: conformance CASES.bin [--op NAME] [--dtype DTYPE] [--coverage] [--seed N]\n"
                    "                   [--backend cuda] [--cuda-exceptions FILE] [--values]\n"
                    "       conformance --print-cpu-capability\n"
                    "  --op NAME      only this op: a base name (add) or name.overload (add.Scalar)\n"
                    "  --dtype DTYPE  only cases of this dtype (float32, int64, ...)\n"
                    "  --coverage     list the registry entries no case ran; exit 1 if there are any\n"
                    "  --seed N       seed of the runner's random layouts (default 1)\n"
                    "  --backend cuda only the CUDA family (device vs cpu); exit 77 without a device\n"
                    "  --cuda-exceptions FILE  the documented ops without a CUDA kernel (a full run\n"
                    "                 fails on an op missing a kernel that the file does not list)\n"
                    "  --values       no allocation-failure injection (the value, error and gradient\n"
                    "                 families only: tests/conformance/cpu_levels.py runs them per\n"
                    "                 CPU level, OPS_CPU_CAPABILITY)\n"
                    "  --print-cpu-capability  the CPU level libops uses in this process, and exit\n");
}

/* op's name without a trailing '_' (add_ -> add), into buf. */
static const char *
base_name(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s", name);
    size_t len = strlen(buf);
    if (len > 1 && buf[len - 1] == '_')
        buf[len - 1] = 0;
    return buf;
}

static bool
op_matches(const ops_op_info *op, const char *filter)
{
    if (op == NULL)
        return false;
    const char *dot = strchr(filter, '.');
    if (dot != NULL)
        return strlen(op->name) == (size_t)(dot - filter) && strncmp(op->name, filter, (size_t)(dot - filter)) == 0 &&
               strcmp(op->overload, dot + 1) == 0;
    char b1[128], b2[128];
    return strcmp(base_name(op->name, b1, sizeof b1), base_name(filter, b2, sizeof b2)) == 0;
}

/* The entry, or one of the other forms of its op, matches. */
static bool
group_matches(const ops_op_info *op, const char *filter)
{
    return op_matches(op, filter) || op_matches(op->functional, filter) || op_matches(op->out, filter) ||
           op_matches(op->inplace, filter);
}

static double
now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int
main(int argc, char **argv)
{
    const char *path = NULL, *op_filter = NULL, *dtype_name = NULL, *exceptions_path = NULL;
    bool coverage = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--op") == 0 && i + 1 < argc) {
            op_filter = argv[++i];
        } else if (strcmp(argv[i], "--dtype") == 0 && i + 1 < argc) {
            dtype_name = argv[++i];
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            char *end;
            runner_seed = strtoull(argv[++i], &end, 0);
            if (*end != 0) {
                usage();
                return 2;
            }
        } else if (strcmp(argv[i], "--coverage") == 0) {
            coverage = true;
        } else if (strcmp(argv[i], "--values") == 0) {
            runner_values_only = true;
        } else if (strcmp(argv[i], "--print-cpu-capability") == 0) {
            printf("%s\n", ops_cpu_capability());
            return 0;
        } else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc && strcmp(argv[i + 1], "cuda") == 0) {
            backend_only = true;
            i++;
        } else if (strcmp(argv[i], "--cuda-exceptions") == 0 && i + 1 < argc) {
            exceptions_path = argv[++i];
        } else if (argv[i][0] != '-' && path == NULL) {
            path = argv[i];
        } else {
            usage();
            return 2;
        }
    }
    if (path == NULL)
        path = getenv("OPS_CASES");
    if (path == NULL) {
        usage();
        return 2;
    }
    if (backend_only) {
#ifdef OPS_WITH_CUDA
        if (ops_cuda_device_count() == 0) {
            printf("conformance --backend cuda: SKIPPED: no CUDA device\n");
            return 77;
        }
#else
        printf("conformance --backend cuda: SKIPPED: libops built without CUDA\n");
        return 77;
#endif
    }
    ops_dtype dtype_filter = OPS_DTYPE_NONE;
    if (dtype_name != NULL && (dtype_filter = ops_dtype_from_name(dtype_name)) == OPS_DTYPE_NONE) {
        fprintf(stderr, "conformance: unknown dtype '%s'\n", dtype_name);
        return 2;
    }

    nregistry = ops_registry_count();
    covered = calloc((size_t)nregistry + 1, sizeof *covered);
    by_ptr = calloc((size_t)nregistry + 1, sizeof *by_ptr);
    bool filter_known = op_filter == NULL;
    for (int i = 0; i < nregistry; i++) {
        by_ptr[i] = ops_registry_at(i);
        filter_known |= op_filter != NULL && group_matches(by_ptr[i], op_filter);
    }
    qsort(by_ptr, (size_t)nregistry, sizeof *by_ptr, cmp_ptr);
    if (!filter_known) {
        fprintf(stderr, "conformance: no registry entry matches --op %s\n", op_filter);
        return 2;
    }
    if (!cases_load(path, &cf)) {
        cases_free(&cf);
        return 2;
    }

    selected = calloc((size_t)cf.ncases + 1, sizeof *selected);
    grad_checked = calloc((size_t)ops_autograd_num_formula_entries + 1, sizeof *grad_checked);
    grad_eligible = calloc((size_t)ops_autograd_num_formula_entries + 1, sizeof *grad_eligible);
    has_f64_case = calloc((size_t)nregistry + 1, sizeof *has_f64_case);
    no_formula = calloc((size_t)nregistry + 1, sizeof *no_formula);
    cuda_missing = calloc((size_t)nregistry + 1, sizeof *cuda_missing);
    for (int i = 0; i < cf.ncases; i++) {
        const test_case *c = &cf.cases[i];
        if (!(c->flags & F_ERROR) && c->dtype == OPS_FLOAT64) {
            const int k = by_ptr_index(c->op);
            if (k >= 0)
                has_f64_case[k] = true;
        }
    }
    char *seen_ops = calloc((size_t)nregistry + 1, 1);
    int nops = 0;
    for (int i = 0; i < cf.ncases; i++) {
        const test_case *c = &cf.cases[i];
        if (op_filter != NULL && !group_matches(c->op, op_filter))
            continue;
        if (dtype_filter != OPS_DTYPE_NONE && c->dtype != dtype_filter)
            continue;
        selected[nselected++] = i;
        /* (a bool or integer result, eq's or logical_and's, has no gradient to check:
         * their formulas serve the in-place forms on a floating self) */
        if ((c->flags & F_VALUES) && !(c->flags & (F_ERROR | F_NO_GRADCHECK)) &&
            c->op->kind == OPS_KIND_FUNCTIONAL && (c->expected == NULL ||
                                                   ops_dtype_is_floating(ops_tensor_dtype(c->expected)))) {
            const int e = formula_index(c->op);
            if (e >= 0)
                grad_eligible[e] = true;
        }
        /* count ops by base name: the first registry entry of that name stands for it */
        char b1[128], b2[128];
        base_name(c->op->name, b1, sizeof b1);
        for (int r = 0; r < nregistry; r++) {
            if (strcmp(base_name(ops_registry_at(r)->name, b2, sizeof b2), b1) == 0) {
                if (!seen_ops[r])
                    nops++;
                seen_ops[r] = 1;
                break;
            }
        }
    }
    free(seen_ops);

    printf("conformance: %d of %d cases selected%s%s%s%s; runner seed %llu, case seed %llu\n", nselected, cf.ncases,
           op_filter ? " (--op " : "", op_filter ? op_filter : "", op_filter ? ")" : "",
           dtype_name ? " (--dtype)" : "", (unsigned long long)runner_seed, (unsigned long long)cf.seed);
    fflush(stdout);
    const double t0 = now_s();
    Suite *suite = suite_create("conformance");
    TCase *tc = tcase_create("numpy-oracle");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_case_run, 0, nselected);
    suite_add_tcase(suite, tc);
    SRunner *sr = srunner_create(suite);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    const double wall = now_s() - t0;
    owned_free_all();

    /* coverage: every registry entry in scope must have had a checked call */
    int uncovered = 0;
    const bool check_coverage = !backend_only && (coverage || dtype_filter == OPS_DTYPE_NONE);
    if (counts.cuda_run > 0 || backend_only)
        uncovered += cuda_report(exceptions_path, op_filter == NULL && dtype_filter == OPS_DTYPE_NONE);
    if (check_coverage) {
        for (int r = 0; r < nregistry; r++) {
            const ops_op_info *e = ops_registry_at(r);
            if (op_filter != NULL && !group_matches(e, op_filter))
                continue;
            const bool *slot = coverage_slot(e);
            if (slot == NULL || !*slot) {
                if (uncovered++ == 0)
                    printf("conformance: registry entries with no conformance run:\n");
                printf("    %s%s%s    %s\n", e->name, e->overload[0] ? "." : "", e->overload, e->schema);
            }
        }
        if (uncovered)
            printf("conformance: %d registry entr%s not covered (each needs a case: docs/conformance.md)\n", uncovered,
                   uncovered == 1 ? "y" : "ies");
        /* every formula of ops/derivatives.yaml had a gradient run */
        for (int e = 0; e < ops_autograd_num_formula_entries; e++) {
            const ops_op_info *fo = ops_registry_find(ops_autograd_formula_entries[e], NULL);
            /* (random ops have no value cases: nothing to compare finite differences with) */
            if (grad_checked[e] || !grad_eligible[e] ||
                (op_filter != NULL && fo != NULL && !group_matches(fo, op_filter)))
                continue;
            printf("conformance: %s has a formula but no gradcheck ran (needs a floating case)\n",
                   ops_autograd_formula_entries[e]);
            uncovered++;
        }
        /* every differentiable op has one */
        for (int r = 0; r < nregistry; r++) {
            if (!no_formula[r])
                continue;
            const ops_op_info *e = by_ptr[r];
            printf("conformance: %s%s%s is differentiable (a floating result from inputs requiring grad) "
                   "but has no formula in ops/derivatives.yaml\n",
                   e->name, e->overload[0] ? "." : "", e->overload);
            uncovered++;
        }
        if (!uncovered && coverage)
            printf("conformance: coverage complete: every registry entry in scope had a conformance run\n");
    }
    printf("conformance: %d ops, %ld op x dtype x variant runs, %ld error cases, %ld fault-injection points, "
           "%ld gradchecks (%ld without double backward, %ld refused by their formula), %ld skipped (CUDA: %s), "
           "%.2f s\n",
           nops, counts.runs, counts.errors, counts.faults, counts.grads, counts.gradgrad_skipped,
           counts.grad_not_implemented, counts.cuda_skipped,
           cuda_skip_reason ? cuda_skip_reason : counts.cuda_run ? "ran" : "no functional case", wall);
    if (counts.cuda_run > 0 || backend_only)
        printf("conformance: CUDA: %ld runs on cuda:0 compared with the cpu, %ld gradient comparisons, %ld "
               "skipped (no CUDA kernel)\n",
               counts.cuda_run, counts.cuda_grads, counts.cuda_skipped);
    cases_free(&cf);
    free(grad_checked);
    free(grad_eligible);
    free(has_f64_case);
    free(no_formula);
    free(cuda_missing);
    free(selected);
    free(covered);
    free(by_ptr);
    return failed == 0 && uncovered == 0 ? 0 : 1;
}
