/* NumPy .npy files: read (memory-mapped, every header field checked) and
 * write (to a temporary file in the same directory, renamed into place:
 * never a partial output file). Self-contained (needs only pk.h's
 * pk_status) so that it can move into the library.
 *
 * Read: format versions 1.0, 2.0 and 3.0; C order (Fortran order only
 * where the two layouts are the same: at most one dimension above 1);
 * little-endian ('<', '=', or no byte order; '|' too) or byte-order-free
 * ('|') dtypes of pk_npy_type, by code ('<f4') or NumPy name ('float32').
 * The header is read as NumPy writes it: a Python dict literal with exactly
 * the keys descr, fortran_order and shape; Python syntax NumPy's writer
 * never produces (comments, hexadecimal or underscored numbers, escapes in
 * strings, duplicate keys) is refused. Bytes after the data are ignored, as
 * NumPy's reader ignores them. Everything else is PK_ERR_IO with a
 * one-line reason.
 *
 * Write: version 1.0 (2.0 past 64 KiB of header, as NumPy), the header
 * padded with spaces to a multiple of 64 bytes and ended by a newline. */
#ifndef PK_NPY_H
#define PK_NPY_H

#include "pk.h"

#include <stddef.h>
#include <stdint.h>

#define PK_NPY_MAX_DIMS 64 /* NumPy 2's limit */
#define PK_NPY_ERR_LEN 384

/* The first six are pk_dtype's values, in its order. */
typedef enum pk_npy_type {
    PK_NPY_F32 = 0, PK_NPY_F64, PK_NPY_I32, PK_NPY_I64, PK_NPY_U32, PK_NPY_U64,
    PK_NPY_U8, PK_NPY_U16, PK_NPY_BOOL,
    PK_NPY_TYPE_COUNT
} pk_npy_type;

/* "f32" ... "u64", "u8", "u16", "bool"; "?" out of range. */
const char *pk_npy_type_name(pk_npy_type t);
/* NumPy's dtype code as written in headers: "<f4", "|u1", "|b1". */
const char *pk_npy_type_descr(pk_npy_type t);
size_t pk_npy_type_size(pk_npy_type t);

typedef struct pk_npy_header {
    int version;        /* 1, 2 or 3 (the major number; the minor is 0) */
    pk_npy_type type;
    int ndim;           /* 0 (a scalar) to PK_NPY_MAX_DIMS */
    int64_t shape[PK_NPY_MAX_DIMS];
    int64_t count;      /* elements: the product of shape (1 for ndim 0) */
    int64_t data_offset; /* bytes before the data */
    int64_t data_bytes; /* count * item size */
} pk_npy_header;

/* Parse and check the .npy file whose len bytes are buf (the whole file).
 * PK_ERR_IO for a file that is not a valid .npy file of a supported type,
 * with a one-line reason (no file name) in err. */
pk_status pk_npy_parse(const void *buf, size_t len, pk_npy_header *h,
                       char *err, size_t errlen);

/* Fill h for an array of (t, ndim, shape) (version 1, no offset): count
 * and data_bytes. PK_ERR_ARG for an invalid type, ndim or shape, or a byte
 * count past int64. */
pk_status pk_npy_header_init(pk_npy_header *h, pk_npy_type t, int ndim,
                             const int64_t *shape);

/* Format the preamble and header of a file holding (t, ndim, shape) into
 * buf (version 0: 1 when the header fits in 64 KiB, else 2). Returns the
 * byte count (a multiple of 64), or 0 when it does not fit in len or the
 * arguments are invalid. */
size_t pk_npy_format_header(char *buf, size_t len, int version, pk_npy_type t,
                            int ndim, const int64_t *shape);

/* ---- Reading ---------------------------------------------------------- */

/* Read the data in at open when it fits in half of the physical memory (so
 * that a kernel's time is its own); larger data is read from disk as it is
 * touched. */
#define PK_NPY_PREFAULT 1u

typedef struct pk_npy_array {
    pk_npy_header h;
    /* The elements in C order, aligned for the type; never NULL after a
     * successful open, even for 0 elements. Read-only (a shared mapping of
     * the file). */
    const void *data;
    char error[PK_NPY_ERR_LEN]; /* "PATH: reason" after a failure */
    void *map_;                 /* private */
    size_t map_len_;
    void *copy_;
} pk_npy_array;

/* Open and map path. flags: PK_NPY_PREFAULT or 0. Errors: PK_ERR_IO (cannot
 * open or map, not a regular file, not a valid .npy file: a.error says
 * which), PK_ERR_NOMEM, PK_ERR_ARG (NULL). After any return, pk_npy_close
 * is safe. */
pk_status pk_npy_open(pk_npy_array *a, const char *path, unsigned flags);
void pk_npy_close(pk_npy_array *a);

/* ---- Writing ---------------------------------------------------------- */

typedef struct pk_npy_writer {
    pk_npy_header h;
    void *data;                 /* write h.count elements here */
    char error[PK_NPY_ERR_LEN]; /* "PATH: reason" after a failure */
    char *path_;                /* private */
    char *tmp_;
    int fd_;
    void *map_;
    size_t map_len_;
    int finished_;
} pk_npy_writer;

/* Create a temporary file next to path, sized and mapped for (t, ndim,
 * shape), with the header written. The disk space is reserved here, so that
 * writing the data cannot fail later. Errors: PK_ERR_IO (w.error; also
 * when path is a directory), PK_ERR_ARG, PK_ERR_NOMEM. After any return,
 * pk_npy_discard is safe. */
pk_status pk_npy_create(pk_npy_writer *w, const char *path, pk_npy_type t,
                        int ndim, const int64_t *shape);
/* Finish the temporary file: its mode (that of a file it replaces, else
 * 0666 less the umask), its data on disk (fsync), and a check that path is
 * not a directory. Nothing is renamed: a command with several outputs
 * finishes them all before it publishes any. On failure the temporary file
 * stays until pk_npy_discard. */
pk_status pk_npy_finish(pk_npy_writer *w);
/* Rename a finished file to its path (replacing a file there). On failure
 * the temporary file is removed. */
pk_status pk_npy_publish(pk_npy_writer *w);
/* pk_npy_finish, then pk_npy_publish; on failure the temporary file is
 * removed. */
pk_status pk_npy_commit(pk_npy_writer *w);
/* Remove the temporary file (if any) and free w. Safe on a zeroed writer,
 * after a failed create, and after commit (then it only frees). */
void pk_npy_discard(pk_npy_writer *w);
/* The temporary file's path while one exists (for a signal handler to
 * unlink), else NULL. */
const char *pk_npy_writer_temp(const pk_npy_writer *w);

/* Create, copy count elements from data, commit. err gets "PATH: reason". */
pk_status pk_npy_save(const char *path, pk_npy_type t, int ndim,
                      const int64_t *shape, const void *data, char *err,
                      size_t errlen);

#endif
