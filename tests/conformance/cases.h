/* The conformance suite's cases, as tests/conformance/gen_cases.py writes them
 * (the file layout is described at its Writer class), and the test-side tensor
 * helpers the runner checks them with.  Nothing here computes an expected value:
 * those come from NumPy, through the case file. */
#ifndef CONFORMANCE_CASES_H
#define CONFORMANCE_CASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops_base.h"
#include "ops_tensor.h"
#include "ops_registry.h"
#include "ops_autograd.h"
#include "ops_optim.h"
#include "ops_random.h"
#include "ops_interop.h"
#include "ops_cuda.h"
#include "ops_internal.h"

/* Case flags (gen_cases.py's F_*). */
enum {
    F_VALUES = 1,         /* compare values (else shape, dtype and device only) */
    F_ERROR = 2,          /* an expected error: match, forms and out_template */
    F_LAYOUTS = 4,        /* also run with non-contiguous inputs */
    F_VARIANTS = 8,       /* also run the op's out= and in-place forms */
    F_ELEMENTWISE = 16,   /* a structured (iterator) op: broadcasting and out= rules apply */
    F_RANDOM = 32,        /* a property-run case: the runner adds random layouts */
    F_SIGNED_ZEROS = 64,  /* the signs of zero results are compared */
    F_DTYPE_ERROR = 128,  /* an undeclared dtype, which must be rejected */
    F_NO_GRADCHECK = 256, /* the metadata's gradcheck: false */
};

/* Forms an error case is run in (gen_cases.py's FORM_BITS). */
enum { FORM_FUNCTIONAL = 1, FORM_OUT = 2, FORM_INPLACE = 4 };

#define MAX_ARGS 16
#define MAX_RETS 8

/* Per-return flags (gen_cases.py's R_*). */
enum {
    RET_COMPARE = 1, /* compare this return's values (with F_VALUES); else shape and dtype only */
    RET_LIST = 2,    /* a Tensor[] return: list/len hold the expected elements */
};

/* One expected return of a value case. */
typedef struct expected_ret {
    uint32_t flags;     /* RET_* */
    ops_tensor *t;      /* a Tensor return */
    ops_tensor **list;  /* RET_LIST: len expected elements */
    int64_t len;
} expected_ret;

typedef struct test_case {
    char *label;
    const ops_op_info *op; /* the entry called: functional, else out= or in-place */
    uint32_t flags;
    ops_dtype dtype; /* the dtype under test (OPS_DTYPE_NONE: none) */
    double rtol, atol, nmse;
    int nargs;
    ops_ivalue args[MAX_ARGS];
    /* F_ERROR */
    char *error;                         /* fragment the message must contain */
    uint32_t forms;                      /* FORM_* */
    int nouts;                           /* out= templates: one per out= argument of the out= form */
    ops_tensor *out_templates[MAX_RETS]; /* ... for FORM_OUT (none: an empty out of the case's dtype) */
    /* otherwise: the returns, in schema order (one for most ops) */
    int nret;
    expected_ret ret[MAX_RETS];
    ops_tensor *expected; /* ret[0].t (NULL when the first return is a Tensor[]) */
} test_case;

typedef struct case_file {
    test_case *cases;
    int ncases;
    uint64_t seed; /* gen_cases.py's --seed (the property run's shapes and dtypes) */
} case_file;

/* Read a case file; on a malformed file print why and return false. */
bool cases_load(const char *path, case_file *cf);
/* Free everything cases_load made. */
void cases_free(case_file *cf);

/* ---- test-side tensor access (independent of libops' kernels) -------------- */

/* Address of the element at row-major position linear, through t's strides. */
const char *element_ptr(const ops_tensor *t, int64_t linear);
/* The element at p, of dtype dt, as a double (int64 may round: compare it apart). */
double read_double(ops_dtype dt, const char *p);
/* Copy src's elements into dst (same shape and dtype, any layout). */
void copy_elements(ops_tensor *dst, const ops_tensor *src);
/* "[4, 5]" of sizes or strides. */
const char *dims_str(int nd, const int64_t *v, char *buf, size_t n);

/* ---- layouts and guarded buffers ------------------------------------------- */

/* Where a tensor's elements lie in its buffer: dims in storage order (outermost
 * first), a step per dim (gaps between neighbours), elements of padding before the
 * first, or every stride 0 (all elements one: an expanded tensor). */
typedef struct layout {
    int perm[OPS_MAX_DIMS];
    int64_t step[OPS_MAX_DIMS];
    int64_t lead;
    bool all_zero;
} layout;

layout layout_contiguous(int nd);
/* Every innermost neighbour two elements apart (gaps that must stay untouched). */
layout layout_strided(int nd);
/* Dims stored in reverse order (a transposed tensor). */
layout layout_transposed(int nd);
/* A random order, steps of 1 to 3 and some padding, drawn from *rng. */
layout layout_random(int nd, uint64_t *rng);
/* Every stride 0. */
layout layout_expanded(int nd);

/* A tensor inside a malloc'd buffer whose every other byte holds a sentinel:
 * guard bytes before and after the elements, and the gaps of a strided layout. */
typedef struct guarded {
    ops_tensor *t;
    unsigned char *buf;
    size_t nbytes;
    unsigned char *mask; /* 1 where an element's byte lies */
    unsigned char *snap; /* the whole buffer, as guarded_snapshot saw it */
    size_t data_off;     /* where the tensor's data pointer lies in buf */
} guarded;

/* New guarded tensor of the given geometry; its elements are src's (when src is
 * not NULL) or the sentinel.  Exits the process if memory runs out. */
void guarded_new(guarded *g, int nd, const int64_t *sizes, ops_dtype dt, const layout *l, const ops_tensor *src);
/* Remember every byte of the buffer. */
void guarded_snapshot(guarded *g);
/* True when no byte of the buffer changed since the snapshot. */
bool guarded_untouched(const guarded *g);
/* True when every sentinel byte is intact (elements may have changed); else
 * writes the first changed byte's offset from the data pointer into *where. */
bool guarded_sentinels_ok(const guarded *g, int64_t *where);
/* Release the tensor and free the buffer. */
void guarded_free(guarded *g);

/* ---- what a case owns ------------------------------------------------------- */

/* A failed check leaves the case through Check's longjmp, past the releases: every
 * tensor and buffer a case makes is listed here, and the runner frees what is left
 * before the next case (so a failing run does not add leak reports to its failure). */
void owned_add(void *p, void (*free_fn)(void *));
/* Free p now (one listed reference of it) and forget it; NULL is a no-op. */
void owned_drop(void *p);
/* Free everything still listed. */
void owned_free_all(void);
/* ops_tensor_release, as an owned_add free function. */
void owned_release_tensor(void *t);

/* A small deterministic generator (splitmix64) for random layouts. */
uint64_t rng_next(uint64_t *state);

#endif /* CONFORMANCE_CASES_H */
