/* libops public API: tensors in files.
 *
 * safetensors (the model hubs' format: a JSON header, then raw little-endian bytes),
 * NumPy's .npy (one array) and .npz (a zip of .npy members).  docs/serialization.md
 * has the formats, the zero-copy rules, what is validated and the messages.
 *
 * Loading a safetensors file maps it (mmap, MAP_PRIVATE): every tensor is a view of
 * the mapped bytes, nothing is read until used, and the mapping stays until the last
 * tensor of it (or a view of one) is released.  Writes into such a tensor are
 * copy-on-write: they change this process's copy of the touched pages only, never the
 * file.  Files are untrusted input: every failure is a status with a message
 * (ops_last_error()) that names the file and, where there is one, the tensor.
 *
 * Ownership follows ops_tensor.h: a dict returned by a load belongs to the caller
 * (ops_tensor_dict_free); tensors read from a dict are borrowed from it (retain them to
 * keep them after the dict is freed); tensors put into a dict are retained by it. */
#ifndef OPS_SERIALIZE_H
#define OPS_SERIALIZE_H

#include "ops_base.h"
#include "ops_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- name -> tensor maps ------------------------------------------------------ */

/* An ordered map from names (UTF-8 strings) to tensors, plus a string -> string
 * metadata map (safetensors' "__metadata__").  Iteration follows insertion order
 * (for a loaded file: the order of the tensors' data in the file). */
typedef struct ops_tensor_dict ops_tensor_dict;

/* A new empty dict; NULL (OPS_ERR_OOM) when out of memory. */
OPS_API ops_tensor_dict *ops_tensor_dict_new(void);
/* Releases every tensor and frees the dict; NULL is a no-op. */
OPS_API void ops_tensor_dict_free(ops_tensor_dict *d);
OPS_API int64_t ops_tensor_dict_size(const ops_tensor_dict *d);
/* The i-th entry (0 <= i < size): its name, and its tensor (borrowed).  NULL with the
 * error set when i is out of range. */
OPS_API const char *ops_tensor_dict_name(const ops_tensor_dict *d, int64_t i);
OPS_API ops_tensor *ops_tensor_dict_tensor(const ops_tensor_dict *d, int64_t i);
/* The tensor named name (borrowed), or NULL with OPS_ERR_INDEX set when absent. */
OPS_API ops_tensor *ops_tensor_dict_get(const ops_tensor_dict *d, const char *name);
/* True when name is in d (sets no error). */
OPS_API bool ops_tensor_dict_contains(const ops_tensor_dict *d, const char *name);
/* Put t (retained) under name, replacing (and releasing) an earlier tensor of that
 * name in its place.  The name is copied.  OPS_ERR_VALUE for a NULL name or tensor. */
OPS_API ops_status ops_tensor_dict_set(ops_tensor_dict *d, const char *name, const ops_tensor *t);

/* The metadata map: count, i-th key and value, lookup (NULL when absent, no error),
 * and set (copies both strings; replaces an existing key's value). */
OPS_API int64_t ops_tensor_dict_metadata_size(const ops_tensor_dict *d);
OPS_API const char *ops_tensor_dict_metadata_key(const ops_tensor_dict *d, int64_t i);
OPS_API const char *ops_tensor_dict_metadata_value(const ops_tensor_dict *d, int64_t i);
OPS_API const char *ops_tensor_dict_metadata_get(const ops_tensor_dict *d, const char *key);
OPS_API ops_status ops_tensor_dict_set_metadata(ops_tensor_dict *d, const char *key, const char *value);

/* ---- safetensors ---------------------------------------------------------------- */

/* Map the safetensors file at path and return its tensors (zero-copy views, see
 * above) and metadata in *out (set to NULL on failure).  Every libops dtype: BOOL,
 * U8, I8, I16, I32, I64, F16, BF16, F32, F64.  A tensor whose data is not aligned to its
 * element size in the file (the header's length is not a multiple of 8: other writers)
 * is copied instead of mapped, as kernels load whole elements.  bool tensors are read
 * once to check that every byte is 0 or 1. */
OPS_API ops_status ops_safetensors_load(const char *path, ops_tensor_dict **out);
/* The same over n bytes in memory, copied (the tensors own their bytes); name is what
 * messages call the buffer (NULL: "<buffer>").  For bytes that are not a file (Python's
 * bytes, network buffers) and the fuzz target. */
OPS_API ops_status ops_safetensors_load_buffer(const void *data, size_t n, const char *name,
                                               ops_tensor_dict **out);
/* Write d's tensors (any device, layout or offset: saved as their contiguous CPU
 * values) and metadata to path, as the safetensors library does: the header padded
 * with spaces to a multiple of 8 bytes, the data ordered by element size (largest
 * first) then name, so every tensor is aligned for a zero-copy load.  Names must be
 * non-empty, valid UTF-8 and not "__metadata__".  The file is written to a temporary
 * name beside path and renamed, so a failure leaves no half-written file. */
OPS_API ops_status ops_safetensors_save(const char *path, const ops_tensor_dict *d);

/* ---- NumPy .npy / .npz ---------------------------------------------------------- */

/* Read the .npy file at path into a new tensor (owning its bytes) in *out.  Formats
 * 1.0, 2.0 and 3.0; C and Fortran order (a Fortran-order array is returned with
 * column-major strides, as NumPy does); dtypes |b1 |u1 |i1 i2 i4 i8 f2 f4 f8 in
 * either byte order (big-endian data is byte-swapped).  Other dtypes (uint16..uint64,
 * complex, strings, objects, structured) are refused naming the descr. */
OPS_API ops_status ops_npy_load(const char *path, ops_tensor **out);
/* The same over n bytes in memory (name for messages, NULL: "<buffer>"). */
OPS_API ops_status ops_npy_load_buffer(const void *data, size_t n, const char *name, ops_tensor **out);
/* Write t as a version 1.0 .npy file (little-endian, C order; any layout or device is
 * saved as its contiguous CPU values).  bfloat16 is refused: NumPy has no such dtype. */
OPS_API ops_status ops_npy_save(const char *path, const ops_tensor *t);

/* Read every member "<name>.npy" of the .npz (zip) file at path, stored or deflated,
 * into *out under <name> (in the zip's order). */
OPS_API ops_status ops_npz_load(const char *path, ops_tensor_dict **out);
/* Write d's tensors as members "<name>.npy" of a zip at path (np.savez's layout),
 * deflated when compress is true (np.savez_compressed), stored otherwise. */
OPS_API ops_status ops_npz_save(const char *path, const ops_tensor_dict *d, bool compress);

#ifdef __cplusplus
}
#endif
#endif /* OPS_SERIALIZE_H */
