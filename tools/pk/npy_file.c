/* .npy files on disk: open and map for reading; create, map, fill and
 * rename into place for writing (npy.h). */
#define _GNU_SOURCE /* MADV_WILLNEED, O_CLOEXEC */
#include "npy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where 0 elements point: kernels refuse NULL even for n = 0. */
static _Alignas(64) const unsigned char empty_data[64];

static pk_status fail(char *err, const char *path, pk_status s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static pk_status fail(char *err, const char *path, pk_status s, const char *fmt, ...)
{
    int n = snprintf(err, PK_NPY_ERR_LEN, "%s: ", path ? path : "(null)");
    if (n < 0 || n >= PK_NPY_ERR_LEN) n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, PK_NPY_ERR_LEN - (size_t)n, fmt, ap);
    va_end(ap);
    return s;
}

/* Read the mapped data in now (see PK_NPY_PREFAULT). */
static void prefault(const unsigned char *p, int64_t bytes)
{
    long page = sysconf(_SC_PAGESIZE), pages = sysconf(_SC_PHYS_PAGES);
    if (page <= 0 || pages <= 0 || bytes > (int64_t)page * pages / 2) return;
    uintptr_t start = (uintptr_t)p & ~(uintptr_t)(page - 1);
    madvise((void *)start, (size_t)((uintptr_t)p + (size_t)bytes - start), MADV_WILLNEED);
    volatile unsigned char sink = 0;
    for (int64_t off = 0; off < bytes; off += page) sink ^= p[off];
    (void)sink;
}

pk_status pk_npy_open(pk_npy_array *a, const char *path, unsigned flags)
{
    if (!a) return PK_ERR_ARG;
    memset(a, 0, sizeof *a);
    if (!path) return fail(a->error, path, PK_ERR_ARG, "no path");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(a->error, path, PK_ERR_IO, "%s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return fail(a->error, path, PK_ERR_IO, "%s", strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return fail(a->error, path, PK_ERR_IO, "not a regular file (pk maps .npy files)");
    }
    if (st.st_size == 0) {
        close(fd);
        return fail(a->error, path, PK_ERR_IO, "empty file, not a .npy file");
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd); /* the mapping keeps the file */
    if (map == MAP_FAILED) return fail(a->error, path, PK_ERR_IO, "cannot map it: %s", strerror(e));
    a->map_ = map, a->map_len_ = (size_t)st.st_size;
    char why[PK_NPY_ERR_LEN];
    pk_status s = pk_npy_parse(map, a->map_len_, &a->h, why, sizeof why);
    if (s != PK_OK) return fail(a->error, path, s, "%s", why);
    const unsigned char *data = (const unsigned char *)map + a->h.data_offset;
    const size_t size = pk_npy_type_size(a->h.type);
    if (a->h.count == 0) {
        a->data = empty_data;
    } else if ((uintptr_t)data % size == 0) {
        a->data = data;
        if (flags & PK_NPY_PREFAULT) prefault(data, a->h.data_bytes);
    } else {
        /* A header length NumPy never writes left the data misaligned for
         * its type: copy it to aligned memory (C requires the alignment). */
        a->copy_ = aligned_alloc(64, ((size_t)a->h.data_bytes + 63) & ~(size_t)63);
        if (!a->copy_)
            return fail(a->error, path, PK_ERR_NOMEM, "no memory to align its data (%lld bytes)",
                        (long long)a->h.data_bytes);
        memcpy(a->copy_, data, (size_t)a->h.data_bytes);
        a->data = a->copy_;
    }
    return PK_OK;
}

void pk_npy_close(pk_npy_array *a)
{
    if (!a) return;
    if (a->map_) munmap(a->map_, a->map_len_);
    free(a->copy_);
    a->map_ = a->copy_ = NULL;
    a->data = NULL;
}

/* ---- Writing ------------------------------------------------------------ */

/* "DIR/.NAME.XXXXXX" next to path (a hidden name: a temporary left by a
 * crash does not pass for an output). */
static char *temp_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
    size_t len = strlen(path) + 16;
    char *t = malloc(len);
    if (t) snprintf(t, len, "%.*s.%s.XXXXXX", (int)dir, path, path + dir);
    return t;
}

/* A path that names a directory: a file cannot be renamed over it. */
static int is_directory(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

pk_status pk_npy_create(pk_npy_writer *w, const char *path, pk_npy_type t, int ndim,
                        const int64_t *shape)
{
    if (!w) return PK_ERR_ARG;
    memset(w, 0, sizeof *w);
    w->fd_ = -1;
    if (!path || !*path) return fail(w->error, path, PK_ERR_ARG, "no path");
    char header[PK_NPY_MAX_DIMS * 24 + 256];
    size_t hl = pk_npy_format_header(header, sizeof header, 0, t, ndim, shape);
    if (hl == 0 || pk_npy_header_init(&w->h, t, ndim, shape) != PK_OK)
        return fail(w->error, path, PK_ERR_ARG, "invalid type or shape for a .npy file");
    if (is_directory(path))
        return fail(w->error, path, PK_ERR_IO, "is a directory, not a file to replace");
    w->path_ = strdup(path);
    w->tmp_ = temp_name(path);
    if (!w->path_ || !w->tmp_) return fail(w->error, path, PK_ERR_NOMEM, "out of memory");
    w->fd_ = mkostemp(w->tmp_, O_CLOEXEC);
    if (w->fd_ < 0) {
        int e = errno;
        free(w->tmp_);
        w->tmp_ = NULL;
        return fail(w->error, path, PK_ERR_IO, "cannot create a file in its directory: %s",
                    strerror(e));
    }
    const uint64_t total = (uint64_t)hl + (uint64_t)w->h.data_bytes;
    int e = posix_fallocate(w->fd_, 0, (off_t)total);
    if (e != 0)
        return fail(w->error, path, PK_ERR_IO, "cannot reserve %llu bytes: %s",
                    (unsigned long long)total, strerror(e));
    w->map_ = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd_, 0);
    if (w->map_ == MAP_FAILED) {
        w->map_ = NULL;
        return fail(w->error, path, PK_ERR_IO, "cannot map it: %s", strerror(errno));
    }
    w->map_len_ = (size_t)total;
    memcpy(w->map_, header, hl);
    w->h.data_offset = (int64_t)hl;
    w->data = (unsigned char *)w->map_ + hl;
    return PK_OK;
}

/* The mode the new file gets: that of the file it replaces, else what
 * open(2) would give (0666 less the umask). */
static mode_t output_mode(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) return st.st_mode & 07777;
    mode_t mask = umask(022);
    umask(mask);
    return 0666 & ~mask;
}

pk_status pk_npy_finish(pk_npy_writer *w)
{
    if (!w || !w->tmp_ || w->fd_ < 0) return PK_ERR_ARG;
    pk_status s = PK_OK;
    if (w->map_ && munmap(w->map_, w->map_len_) != 0)
        s = fail(w->error, w->path_, PK_ERR_IO, "cannot unmap it: %s", strerror(errno));
    w->map_ = NULL, w->data = NULL;
    if (s == PK_OK && fchmod(w->fd_, output_mode(w->path_)) != 0)
        s = fail(w->error, w->path_, PK_ERR_IO, "cannot set its mode: %s", strerror(errno));
    /* on disk before any rename: a crash never publishes a half-written file */
    if (s == PK_OK && fsync(w->fd_) != 0)
        s = fail(w->error, w->path_, PK_ERR_IO, "cannot write it: %s", strerror(errno));
    if (close(w->fd_) != 0 && s == PK_OK)
        s = fail(w->error, w->path_, PK_ERR_IO, "cannot write it: %s", strerror(errno));
    w->fd_ = -1;
    if (s == PK_OK && is_directory(w->path_))
        s = fail(w->error, w->path_, PK_ERR_IO, "is a directory, not a file to replace");
    w->finished_ = s == PK_OK;
    return s;
}

pk_status pk_npy_publish(pk_npy_writer *w)
{
    if (!w || !w->tmp_ || !w->finished_) return PK_ERR_ARG;
    pk_status s = PK_OK;
    if (rename(w->tmp_, w->path_) != 0) {
        s = fail(w->error, w->path_, PK_ERR_IO, "cannot rename the finished file into place: %s",
                 strerror(errno));
        unlink(w->tmp_);
    }
    free(w->tmp_);
    w->tmp_ = NULL;
    return s;
}

pk_status pk_npy_commit(pk_npy_writer *w)
{
    pk_status s = pk_npy_finish(w);
    if (s == PK_OK) return pk_npy_publish(w);
    if (w && w->tmp_) unlink(w->tmp_);
    if (w) free(w->tmp_), w->tmp_ = NULL;
    return s;
}

void pk_npy_discard(pk_npy_writer *w)
{
    if (!w) return;
    if (w->map_) munmap(w->map_, w->map_len_);
    if (w->fd_ >= 0) close(w->fd_);
    if (w->tmp_) unlink(w->tmp_);
    free(w->tmp_);
    free(w->path_);
    w->map_ = w->data = NULL;
    w->tmp_ = w->path_ = NULL;
    w->fd_ = -1;
    w->finished_ = 0;
}

const char *pk_npy_writer_temp(const pk_npy_writer *w) { return w ? w->tmp_ : NULL; }

pk_status pk_npy_save(const char *path, pk_npy_type t, int ndim, const int64_t *shape,
                      const void *data, char *err, size_t errlen)
{
    pk_npy_writer w;
    pk_status s = pk_npy_create(&w, path, t, ndim, shape);
    if (s == PK_OK && w.h.count > 0 && !data)
        s = fail(w.error, path, PK_ERR_ARG, "no data");
    if (s == PK_OK) {
        if (w.h.data_bytes) memcpy(w.data, data, (size_t)w.h.data_bytes);
        s = pk_npy_commit(&w);
    }
    if (s != PK_OK && err && errlen) snprintf(err, errlen, "%s", w.error);
    pk_npy_discard(&w);
    return s;
}
