/* tests/newop: the new op from a user's side, in the temporary tree where
 * test_newop.py added it.  The program compiles only if ops_functions.h declares
 * the three C functions docs/codegen.md's naming rules give for the schema, and it
 * checks the boxed registry's entries against the schema text of special_logit.yaml.
 * Expected values are hand-derived: special_logit(p) = ln(p / (1 - p)), so special_logit(1/2) = 0,
 * special_logit(3/4) = ln 3, special_logit(1/5) = -ln 4, special_logit(1) = inf, and with eps = 1/4 the
 * inputs 0.1 and 0.9 are clamped to 1/4 and 3/4.  (Values in every dtype, layouts
 * and error paths are the conformance suite's job.) */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "libops.h"

static int failures;

#define EXPECT(cond, ...)                                                                \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "use_special_logit: FAIL %s:%d: ", __FILE__, __LINE__);              \
            fprintf(stderr, __VA_ARGS__);                                                \
            fprintf(stderr, "\n");                                                       \
            failures++;                                                                  \
        }                                                                                \
    } while (0)

/* t (float64, n elements, contiguous) equals want[] to 1e-15 (inf: exactly). */
static void
expect_values(const char *what, const ops_tensor *t, const double *want, int n)
{
    EXPECT(t != NULL, "%s: NULL (%s)", what, ops_last_error());
    if (!t)
        return;
    EXPECT(ops_tensor_dtype(t) == OPS_FLOAT64, "%s: dtype %s", what, ops_dtype_name(ops_tensor_dtype(t)));
    EXPECT(ops_tensor_numel(t) == n, "%s: %lld elements", what, (long long)ops_tensor_numel(t));
    if (ops_tensor_dtype(t) != OPS_FLOAT64 || ops_tensor_numel(t) != n)
        return;
    const double *got = ops_tensor_data_ptr(t);
    for (int i = 0; i < n; i++)
        EXPECT(isinf(want[i]) ? got[i] == want[i] : fabs(got[i] - want[i]) <= 1e-15,
               "%s[%d] = %.17g, expected %.17g", what, i, got[i], want[i]);
}

static void
expect_schema(const ops_op_info *op, const char *name, const char *schema)
{
    EXPECT(op != NULL, "registry: no entry for %s", name);
    if (op)
        EXPECT(strcmp(op->schema, schema) == 0, "registry: %s has schema '%s', expected '%s'", name,
               op->schema, schema);
}

int
main(void)
{
    const double p[4] = {0.5, 0.75, 0.2, 1.0};
    const double want[4] = {0.0, log(3.0), -log(4.0), INFINITY};
    const double q[3] = {0.1, 0.9, 0.5};
    const double want_eps[3] = {-log(3.0), log(3.0), 0.0};
    const double eps = 0.25;

    ops_tensor *x = ops_tensor_from_data(p, OPS_INTS(4), OPS_FLOAT64);
    ops_tensor *y = ops_special_logit(x, NULL); /* eps=None */
    expect_values("special_logit(x)", y, want, 4);

    ops_tensor *out = ops_tensor_from_data(p, OPS_INTS(0), OPS_FLOAT64); /* resized by out= */
    EXPECT(ops_special_logit_out(x, NULL, out) == OPS_OK, "special_logit.out: %s", ops_last_error());
    expect_values("special_logit(x, out=)", out, want, 4);

    ops_tensor *z = ops_tensor_from_data(q, OPS_INTS(3), OPS_FLOAT64);
    EXPECT(ops_special_logit_(z, &eps) == OPS_OK, "special_logit_: %s", ops_last_error());
    expect_values("z.special_logit_(eps=0.25)", z, want_eps, 3);

    /* float16 is not declared: the kernel refuses it, naming the op and the dtype. */
    ops_tensor *h = ops_scalar_tensor(OPS_SCALAR_FLOAT(0.5), OPS_FLOAT16);
    ops_tensor *bad = ops_special_logit(h, NULL);
    EXPECT(bad == NULL && ops_last_status() == OPS_ERR_DTYPE, "special_logit(float16) did not fail with a dtype error");
    EXPECT(strstr(ops_last_error(), "special_logit") && strstr(ops_last_error(), "float16"),
           "special_logit(float16): message '%s' names neither special_logit nor float16", ops_last_error());

    /* The boxed registry: the three entries with their schemas, grouped. */
    const ops_op_info *f = ops_registry_find("special_logit", NULL);
    expect_schema(f, "special_logit", "special_logit(Tensor self, float? eps=None) -> Tensor");
    expect_schema(ops_registry_find("special_logit", "out"), "special_logit.out",
                  "special_logit.out(Tensor self, float? eps=None, *, Tensor(a!) out) -> Tensor(a!)");
    expect_schema(ops_registry_find("special_logit_", NULL), "special_logit_",
                  "special_logit_(Tensor(a!) self, float? eps=None) -> Tensor(a!)");
    if (f) {
        EXPECT(f->out == ops_registry_find("special_logit", "out") && f->inplace == ops_registry_find("special_logit_", NULL),
               "registry: special_logit's group does not link its out= and in-place forms");
        EXPECT(strcmp(f->c_name, "ops_special_logit") == 0, "registry: C name %s", f->c_name);
        EXPECT(f->out && f->out->conformance && strstr(f->out->conformance, "np.clip"),
               "registry: special_logit.out carries no conformance metadata");
    }

    ops_tensor_release(bad);
    ops_tensor_release(h);
    ops_tensor_release(z);
    ops_tensor_release(out);
    ops_tensor_release(y);
    ops_tensor_release(x);
    if (failures == 0)
        printf("use_special_logit: the C API and the boxed registry have special_logit, special_logit.out and special_logit_\n");
    return failures == 0 ? 0 : 1;
}
