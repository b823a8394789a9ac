/* Internal to the argument parser of libops._C (arg_parser.c binds arguments to an
 * overload and calls it, arg_convert.c converts one Python object to a boxed value):
 * the state of one call being parsed and why an argument did not convert. */
#ifndef PYOPS_ARGS_H
#define PYOPS_ARGS_H

#include "pyops.h"

#define PYOPS_MAX_ARGS 32
/* Inline room for list arguments; longer lists go to the heap. */
#define PYOPS_ARENA_INTS 64
#define PYOPS_ARENA_TENSORS 32
#define PYOPS_ARENA_BOOLS 32

typedef struct pyops_parsed {
    ops_ivalue iv[PYOPS_MAX_ARGS];
    PyObject *obj[PYOPS_MAX_ARGS]; /* the Python object bound to each argument (borrowed) */
    int pos[PYOPS_MAX_ARGS];       /* its 1-based position when given positionally, else 0 */
    int64_t ints[PYOPS_ARENA_INTS];
    const ops_tensor *tensors[PYOPS_ARENA_TENSORS];
    bool bools[PYOPS_ARENA_BOOLS];
    int nints, ntensors, nbools;
    int requires_grad; /* factories' requires_grad= (torch's): -1 not given */
    void *heap[PYOPS_MAX_ARGS];
    int nheap;
} pyops_parsed;

/* Why an argument did not convert, for the message when no overload matches: the text
 * that follows "op(): argument 'name' (position N)", e.g. " must be int, not str" or
 * ": invalid device 'gpu': ...".  `value` marks an argument of the right type whose
 * value is unusable (an int beyond int64, a device string naming no device): those
 * raise RuntimeError, as the op's own value errors do; the others TypeError. */
typedef struct pyops_reason {
    char text[384];
    bool value;
} pyops_reason;

/* Records why an argument did not convert (the first reason given wins); why may be NULL. */
void pyops_say(pyops_reason *why, bool value, const char *fmt, ...);
/* What a message shows of a value: its repr, cut short. */
void pyops_short_repr(PyObject *o, char *buf, size_t n);
/* An index as torch's int arguments take it (an int or a 0-dim integer tensor): 1 read, 0 not one. */
int pyops_to_index_checked(PyObject *o, int64_t *out);
/* One argument: 1 converted, 0 no match (why, when given, may say more than the
 * type's name: a bad element, an out-of-range value). */
int pyops_convert_arg(pyops_parsed *p, const pyops_arg *a, PyObject *o, ops_ivalue *iv, pyops_reason *why);

#endif /* PYOPS_ARGS_H */
