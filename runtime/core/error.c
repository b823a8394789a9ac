/* The thread-local error slot: every failing libops call leaves its status and a
 * message here, so errors need no out-parameter and threads never see each
 * other's failures. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ops_internal.h"

#define OPS_ERROR_MSG_LEN 1024

static _Thread_local char tl_message[OPS_ERROR_MSG_LEN];
static _Thread_local ops_status tl_status = OPS_OK;
/* Counts this thread's failures, so internal code can tell whether a callee failed
 * (and said why) without clearing the slot first: the slot only ever changes on a
 * failure or on ops_clear_error(), never on a success. */
static _Thread_local uint64_t tl_serial;

static const char *const status_strings[] = {
#define OPS_X_(e, msg) [e] = msg,
    OPS_FOREACH_STATUS(OPS_X_)
#undef OPS_X_
};

const char *
ops_status_str(ops_status st)
{
    if ((int)st < 0 || st >= OPS_NUM_STATUS)
        return "unknown status";
    return status_strings[st];
}

const char *
ops_last_error(void)
{
    return tl_message;
}

ops_status
ops_last_status(void)
{
    return tl_status;
}

void
ops_clear_error(void)
{
    tl_status = OPS_OK;
    tl_message[0] = '\0';
}

uint64_t
ops_error_serial(void)
{
    return tl_serial;
}

ops_status
ops_vfail(ops_status st, const char *fmt, va_list ap)
{
    /* Format into a scratch buffer first: callers may pass ops_last_error() itself
     * as an argument (re-prefixing a nested failure), which must not be clobbered
     * while it is being read. */
    char scratch[OPS_ERROR_MSG_LEN];
    if (fmt == NULL)
        fmt = "";
    int n = vsnprintf(scratch, sizeof scratch, fmt, ap);
    if (n < 0)
        snprintf(scratch, sizeof scratch, "%s", "(error message could not be formatted)");
    memcpy(tl_message, scratch, sizeof scratch);
    /* A failure never reports success: a caller that passes OPS_OK still failed. */
    tl_status = st == OPS_OK ? OPS_ERR_RUNTIME : st;
    tl_serial++;
    return tl_status;
}

ops_status
ops_fail(ops_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ops_status ret = ops_vfail(st, fmt, ap);
    va_end(ap);
    return ret;
}

void *
ops_fail_null(ops_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ops_vfail(st, fmt, ap);
    va_end(ap);
    return NULL;
}

const char *
ops_shape_str(int ndim, const int64_t *sizes, char *buf, size_t n)
{
    if (buf == NULL || n == 0)
        return buf;
    size_t pos = 0;
    buf[0] = '\0';
    int w = snprintf(buf, n, "[");
    pos = (size_t)w;
    for (int i = 0; i < ndim && pos < n; i++) {
        w = snprintf(buf + pos, n - pos, i == 0 ? "%" PRId64 : ", %" PRId64, sizes[i]);
        if (w < 0)
            break;
        pos += (size_t)w;
    }
    if (pos < n)
        snprintf(buf + pos, n - pos, "]");
    return buf;
}
