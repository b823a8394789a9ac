/* libops public API: zero-copy interop with other frameworks and processes.
 *
 * DLPack: export a tensor as a DLManagedTensor and import one without copying.
 * The DLPack structs come from <dlpack/dlpack.h> (Debian's libdlpack-dev); this
 * header names them only as incomplete struct types, so including libops.h does
 * not need the DLPack header.  Include <dlpack/dlpack.h> to look inside them.
 *
 * Shared memory: move a CPU tensor's storage into a POSIX shared-memory segment
 * (share_memory_), describe it with a handle (a small struct with a string form),
 * and map the same storage in another process from that handle.
 *
 * Ownership is spelled out on every call; docs/interop.md has the design. */
#ifndef OPS_INTEROP_H
#define OPS_INTEROP_H

#include "ops_base.h"
#include "ops_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

struct DLManagedTensor;
struct DLManagedTensorVersioned;

/* ---- DLPack ------------------------------------------------------------ */

/* Export t as a new DLManagedTensor (legacy, unversioned form) that shares t's
 * bytes.  Any sizes, strides and storage offset; dtypes bool (DLPack code 6, as
 * DLPack >= 0.8 and PyTorch 2 write it), uint8, int8..int64, float16, bfloat16,
 * float32, float64; device CPU or CUDA.  The result holds a reference to t
 * (and so to its storage), so the caller may release t at once; whoever ends up
 * owning the result calls its deleter exactly once, which drops that reference.
 * Until then the storage is exported: operations that would move its bytes
 * (growing it as an out=, share_memory_) are refused.
 * data points at element [0, ...] and byte_offset is 0, as PyTorch exports.
 * NULL with the error set on failure (t is untouched). */
OPS_API struct DLManagedTensor *ops_tensor_to_dlpack(const ops_tensor *t);

/* Import a DLManagedTensor as a tensor that shares its bytes (no copy).
 * ALWAYS takes ownership of m: on success m->deleter(m) runs exactly once, when
 * the last view of the returned tensor's storage goes; on failure it has already
 * run (once) when this returns NULL with the error set.  A NULL m is an error
 * (nothing to delete).  Refused: dtype codes/bits DLPack has but libops has not
 * (complex, opaque, uint16, ...), lanes != 1, devices other than CPU and CUDA (CUDA
 * only in a CUDA build), byte_offset or data not aligned to the element size,
 * a byte_offset over PTRDIFF_MAX or one whose addressed span wraps the address
 * space, more than OPS_MAX_DIMS dimensions, negative sizes.  Negative strides are
 * accepted (the tensor's offset points into the addressed span).  strides NULL
 * means row-major.  A bool tensor holding a byte other than 0 or 1 is imported
 * as a normalised copy (sharing is lost only for such invalid data; m's deleter
 * then runs before this returns). */
OPS_API ops_tensor *ops_tensor_from_dlpack(struct DLManagedTensor *m);

/* The versioned forms (DLPack >= 1.0's DLManagedTensorVersioned, which carries
 * the DLPack version and flags such as read-only).  Available when libops was
 * built against a DLPack header that has the versioned struct; otherwise they
 * fail with OPS_ERR_NOT_IMPLEMENTED, and from_dlpack_versioned then leaves m to
 * the caller (such a build cannot see its deleter).  ops_dlpack_has_versioned()
 * says which, so a binding can ask before it hands over ownership. */
OPS_API bool ops_dlpack_has_versioned(void);
OPS_API struct DLManagedTensorVersioned *ops_tensor_to_dlpack_versioned(const ops_tensor *t);
/* As ops_tensor_from_dlpack; also refuses a major version other than the
 * header's and tensors flagged read-only (libops tensors are writable). */
OPS_API ops_tensor *ops_tensor_from_dlpack_versioned(struct DLManagedTensorVersioned *m);

/* DLPack's (device_type, device_id) for t: kDLCPU = 1 with id 0, or kDLCUDA = 2
 * with the CUDA index, the pair __dlpack_device__ returns. */
OPS_API ops_status ops_tensor_dlpack_device(const ops_tensor *t, int32_t *device_type, int32_t *device_id);

/* ---- shared memory ------------------------------------------------------- */

/* The POSIX shm + mmap allocator: each block is its own segment named
 * "/libops_<pid>_<16 random hex digits>", mode 0600, mapped MAP_SHARED; freeing
 * the block in the process that created it unmaps it and unlinks the name.  Blocks are 64-byte aligned.  A
 * helper process started on first use unlinks this process's names if the
 * process dies without freeing them (also on SIGKILL); see docs/interop.md. */
OPS_API const ops_allocator *ops_shm_allocator(void);

/* Move t's storage into shared memory in place: every view of that storage now
 * addresses the segment, with its values unchanged.  A no-op when the storage
 * is already shared and for CUDA tensors (PyTorch's rule).  Storages that came
 * from from_blob / from_dlpack are copied into the segment and their deleter
 * runs (they no longer alias the caller's memory, as in PyTorch).  Refused
 * (OPS_ERR_VALUE) while the storage is exported (DLPack, NumPy, a memoryview):
 * the exporter holds the old address.  Not thread-safe against concurrent use
 * of the same storage. */
OPS_API ops_status ops_tensor_share_memory_(ops_tensor *t);
/* True when t's storage lives in shared memory (or t is on CUDA, as in PyTorch). */
OPS_API bool ops_tensor_is_shared(const ops_tensor *t);

/* Longest segment name, with its leading '/' and NUL. */
#define OPS_SHM_NAME_MAX 64

/* What another process needs to map t: the segment, the storage's size and the
 * view's geometry.  Plain data, copyable. */
typedef struct ops_shm_handle {
    char name[OPS_SHM_NAME_MAX]; /* "/libops_<pid>_<16 random hex digits>" */
    uint64_t nbytes;              /* bytes of the storage */
    ops_dtype dtype;
    int32_t ndim;
    int64_t sizes[OPS_MAX_DIMS];
    int64_t strides[OPS_MAX_DIMS]; /* in elements */
    int64_t offset;                /* in elements */
} ops_shm_handle;

/* Room for any handle's string form, NUL included. */
#define OPS_SHM_HANDLE_STR_MAX (OPS_SHM_NAME_MAX + 64 + 2 * OPS_MAX_DIMS * 21 + 32)

/* Fill *h for t, whose storage must be shared already (ops_tensor_share_memory_). */
OPS_API ops_status ops_tensor_shm_handle(const ops_tensor *t, ops_shm_handle *h);
/* The handle as one line of text ("libops-shm:1:<name>:<nbytes>:<dtype>:<sizes>:
 * <strides>:<offset>", lists comma-separated), into buf (always NUL-terminated);
 * OPS_ERR_VALUE if buflen is too small (OPS_SHM_HANDLE_STR_MAX always suffices). */
OPS_API ops_status ops_shm_handle_to_string(const ops_shm_handle *h, char *buf, size_t buflen);
/* Parse what ops_shm_handle_to_string wrote; OPS_ERR_VALUE on malformed text. */
OPS_API ops_status ops_shm_handle_from_string(const char *text, ops_shm_handle *h);
/* Map the handle's segment and return a CPU tensor with its geometry over it: the
 * same bytes the sharing process sees, writes visible both ways.  The segment
 * must still exist (some process that created it still holds its storage).  The
 * result is shared (ops_tensor_is_shared); releasing its last view unmaps it.
 * NULL with the error set on failure (missing segment, size or geometry that does
 * not fit, not a libops segment). */
OPS_API ops_tensor *ops_tensor_from_shm_handle(const ops_shm_handle *h);

#ifdef __cplusplus
}
#endif
#endif /* OPS_INTEROP_H */
