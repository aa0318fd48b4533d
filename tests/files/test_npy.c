/* The .npy reader and writer (tools/pk/npy.h): every malformed-header case
 * refused with its reason, truncation at every byte, round trips of every
 * type and version, shapes whose byte counts overflow, files larger than 4
 * GiB (sparse), misaligned data, and a writer that never leaves a partial
 * or temporary file. Random data: seed printed, PK_TEST_SEED replays. */
#include "npy.h"
#include "util.h"
#include "files/npy_cases.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[512];

static void path_in_dir(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

static int write_file(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t n = len ? fwrite(buf, 1, len, f) : 0;
    return fclose(f) == 0 && n == len ? 0 : -1;
}

/* Entries in the test directory (a temporary left behind shows here). */
static int dir_entries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.' || e->d_name[1] > '.';
    if (d) closedir(d);
    return n;
}

static int one_line(const char *s) { return s[0] && !strchr(s, '\n'); }

/* Parse the first len bytes of f from an exact-size copy (so that the
 * sanitizer sees any read past them). */
static pk_status parse_copy(const unsigned char *f, size_t len, pk_npy_header *h, char *err,
                            size_t errlen)
{
    unsigned char *copy = pk_test_alloc(len);
    if (len) memcpy(copy, f, len);
    pk_status s = pk_npy_parse(copy, len, h, err, errlen);
    free(copy);
    return s;
}

static void test_cases(void)
{
    char path[600], err[PK_NPY_ERR_LEN];
    for (int i = 0; i < NPY_NCASES; i++) {
        const npy_case *c = &npy_cases[i];
        size_t len;
        unsigned char *f = npy_case_file(c, &len);
        pk_npy_header h;
        pk_status s = parse_copy(f, len, &h, err, sizeof err);
        if (c->expect)
            PK_CHECK(s == PK_ERR_IO && strstr(err, c->expect) && one_line(err),
                     "%s: status %d, '%s' (want '%s')", c->name, s, err, c->expect);
        else
            PK_CHECK(s == PK_OK, "%s: refused: %s", c->name, err);
        /* The same through a file: the message starts with its name. */
        path_in_dir(path, sizeof path, c->name);
        PK_CHECK(write_file(path, f, len) == 0, "%s: cannot write", path);
        pk_npy_array a;
        s = pk_npy_open(&a, path, PK_NPY_PREFAULT);
        if (c->expect)
            PK_CHECK(s == PK_ERR_IO && strncmp(a.error, path, strlen(path)) == 0 &&
                         strstr(a.error, c->expect) && one_line(a.error),
                     "%s: open: status %d, '%s'", c->name, s, a.error);
        else
            PK_CHECK(s == PK_OK && a.data && (uintptr_t)a.data % pk_npy_type_size(a.h.type) == 0,
                     "%s: open: %s", c->name, a.error);
        pk_npy_close(&a);
        unlink(path);
        free(f);
    }
    for (int i = 0; i < NPY_NRAW; i++) {
        const npy_raw_case *c = &npy_raw_cases[i];
        pk_npy_header h;
        pk_status s = parse_copy((const unsigned char *)c->bytes, c->len, &h, err, sizeof err);
        PK_CHECK(s == PK_ERR_IO && strstr(err, c->expect) && one_line(err),
                 "%s: status %d, '%s' (want '%s')", c->name, s, err, c->expect);
    }
    /* The fields of one accepted case. */
    size_t len;
    unsigned char *f = npy_case_file(&npy_cases[1], &len);
    pk_npy_header h;
    PK_CHECK(pk_npy_parse(f, len, &h, err, sizeof err) == PK_OK && h.version == 2 &&
                 h.type == PK_NPY_F64 && h.ndim == 2 && h.shape[0] == 2 && h.shape[1] == 3 &&
                 h.count == 6 && h.data_bytes == 48 && h.data_offset == (int64_t)(len - 48),
             "numpy_v2 fields");
    free(f);
}

/* A valid file of (t, ndim, shape) at version v with random data. */
static unsigned char *make_file(int v, pk_npy_type t, int ndim, const int64_t *shape, size_t *len)
{
    char hdr[4096];
    size_t hl = pk_npy_format_header(hdr, sizeof hdr, v, t, ndim, shape);
    pk_npy_header h;
    if (hl == 0 || pk_npy_header_init(&h, t, ndim, shape) != PK_OK) return NULL;
    *len = hl + (size_t)h.data_bytes;
    unsigned char *f = pk_test_alloc(*len);
    memcpy(f, hdr, hl);
    for (size_t i = hl; i < *len; i++) f[i] = (unsigned char)pk_test_next();
    return f;
}

static void test_truncation(void)
{
    char err[PK_NPY_ERR_LEN], path[600];
    const int64_t shape[2] = {3, 4};
    for (int v = 1; v <= 3; v++) {
        size_t len;
        unsigned char *f = make_file(v, PK_NPY_F64, 2, shape, &len);
        pk_npy_header h;
        PK_CHECK(f && parse_copy(f, len, &h, err, sizeof err) == PK_OK, "v%d whole: %s", v, err);
        path_in_dir(path, sizeof path, "cut.npy");
        for (size_t cut = 0; f && cut < len; cut++) {
            pk_status s = parse_copy(f, cut, &h, err, sizeof err);
            PK_CHECK(s == PK_ERR_IO && one_line(err), "v%d cut at %zu: status %d '%s'", v, cut,
                     s, err);
            pk_npy_array a;
            write_file(path, f, cut);
            s = pk_npy_open(&a, path, 0);
            PK_CHECK(s == PK_ERR_IO && one_line(a.error) && strstr(a.error, path),
                     "v%d file cut at %zu: status %d '%s'", v, cut, s, a.error);
            pk_npy_close(&a);
        }
        unlink(path);
        free(f);
    }
}

static void test_roundtrip(void)
{
    static const int64_t shapes[][4] = {{0}, {1, 0}, {1, 1}, {1, 7}, {2, 3, 5}, {3, 2, 0, 3},
                                        {4, 2, 3, 4}, {2, 1, 1}, {1, 1000}};
    char path[600], err[PK_NPY_ERR_LEN];
    path_in_dir(path, sizeof path, "rt.npy");
    for (int t = 0; t < PK_NPY_TYPE_COUNT; t++)
        for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
            for (int v = 0; v <= 3; v++) {
                const int ndim = (int)shapes[si][0];
                const int64_t *shape = &shapes[si][1];
                size_t len;
                unsigned char *f = make_file(v, (pk_npy_type)t, ndim, shape, &len);
                if (!f) {
                    PK_CHECK(0, "make_file %d %zu %d", t, si, v);
                    continue;
                }
                if (v == 0) { /* through the writer */
                    pk_npy_header h0;
                    pk_npy_header_init(&h0, (pk_npy_type)t, ndim, shape);
                    const unsigned char *data = f + len - h0.data_bytes;
                    PK_CHECK(pk_npy_save(path, (pk_npy_type)t, ndim, shape, data, err,
                                         sizeof err) == PK_OK, "save: %s", err);
                } else {
                    write_file(path, f, len);
                }
                pk_npy_array a;
                pk_status s = pk_npy_open(&a, path, PK_NPY_PREFAULT);
                int same = s == PK_OK && a.h.type == (pk_npy_type)t && a.h.ndim == ndim &&
                           a.h.version == (v ? v : 1);
                for (int d = 0; same && d < ndim; d++) same = a.h.shape[d] == shape[d];
                same = same && memcmp(a.data, f + len - a.h.data_bytes, (size_t)a.h.data_bytes) == 0;
                PK_CHECK(same, "%s shape #%zu version %d: %s", pk_npy_type_name((pk_npy_type)t),
                         si, v, a.error);
                PK_CHECK(s != PK_OK || (a.h.data_offset % 64 == 0 && (uintptr_t)a.data % 64 == 0),
                         "alignment");
                pk_npy_close(&a);
                free(f);
            }
    unlink(path);
    /* NumPy's own bytes for np.save(np.zeros(3, np.float32)) */
    char hdr[256];
    const int64_t three = 3;
    size_t hl = pk_npy_format_header(hdr, sizeof hdr, 0, PK_NPY_F32, 1, &three);
    const char want[] = "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, "
                        "'shape': (3,), }";
    PK_CHECK(hl == 128 && memcmp(hdr, want, sizeof want - 1) == 0 && hdr[127] == '\n' &&
                 hdr[126] == ' ', "NumPy's header bytes");
    /* 64 dimensions (NumPy's limit); 65 refused */
    int64_t many[PK_NPY_MAX_DIMS + 1];
    for (int d = 0; d <= PK_NPY_MAX_DIMS; d++) many[d] = d % 9 == 0 ? 2 : 1;
    size_t len;
    unsigned char *f = make_file(1, PK_NPY_U8, PK_NPY_MAX_DIMS, many, &len);
    pk_npy_header h;
    PK_CHECK(f && parse_copy(f, len, &h, err, sizeof err) == PK_OK && h.ndim == 64 &&
                 h.count == 256, "64 dimensions: %s", err);
    free(f);
    PK_CHECK(pk_npy_format_header(hdr, sizeof hdr, 1, PK_NPY_U8, 65, many) == 0, "65 dims");
    char text[2048] = "{'descr': '|u1', 'fortran_order': False, 'shape': (";
    for (int d = 0; d < 65; d++) strcat(text, "1, ");
    strcat(text, ")}");
    npy_case c = {"65 dims", 1, text, strlen(text), 1, "more than 64 dimensions"};
    f = npy_case_file(&c, &len);
    PK_CHECK(parse_copy(f, len, &h, err, sizeof err) == PK_ERR_IO && strstr(err, c.expect),
             "65 dims: %s", err);
    free(f);
}

static void test_big(void)
{
    char hdr[256], err[PK_NPY_ERR_LEN], path[600];
    const int64_t over[][3] = {{INT64_MAX / 4 + 1}, {(int64_t)1 << 31, (int64_t)1 << 31, 2},
                               {0, INT64_MAX, 2}, {-1}};
    pk_npy_header h;
    for (int i = 0; i < 4; i++) {
        const int ndim = over[i][2] ? 3 : over[i][1] ? 2 : 1;
        const int64_t shape[3] = {over[i][0], over[i][1], over[i][2]};
        PK_CHECK(pk_npy_format_header(hdr, sizeof hdr, 1, PK_NPY_F32, ndim, shape) == 0 &&
                     pk_npy_header_init(&h, PK_NPY_F32, ndim, shape) == PK_ERR_ARG,
                 "overflowing shape #%d accepted", i);
        pk_npy_writer w;
        path_in_dir(path, sizeof path, "over.npy");
        int before = dir_entries();
        PK_CHECK(pk_npy_create(&w, path, PK_NPY_F32, ndim, shape) == PK_ERR_ARG, "create #%d", i);
        pk_npy_discard(&w);
        PK_CHECK(dir_entries() == before && access(path, F_OK) != 0, "create left a file");
    }
    /* A header that promises more than the file holds, past 2^32 bytes. */
    const int64_t huge = (int64_t)1 << 40;
    size_t hl = pk_npy_format_header(hdr, sizeof hdr, 1, PK_NPY_F64, 1, &huge);
    PK_CHECK(pk_npy_parse(hdr, hl, &h, err, sizeof err) == PK_ERR_IO &&
                 strstr(err, "needs 8796093022208 bytes of data, the file has 0"), "%s", err);
    /* A 5 GiB file (sparse): sizes past 32 bits, mapped, not read in. */
    const int64_t n5 = (int64_t)5 << 27; /* f64: 5 GiB */
    hl = pk_npy_format_header(hdr, sizeof hdr, 1, PK_NPY_F64, 1, &n5);
    path_in_dir(path, sizeof path, "big.npy");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int ok = fd >= 0 && write(fd, hdr, hl) == (ssize_t)hl &&
             ftruncate(fd, (off_t)(hl + (size_t)n5 * 8)) == 0;
    if (fd >= 0) close(fd);
    if (ok) {
        pk_npy_array a;
        pk_status s = pk_npy_open(&a, path, 0);
        PK_CHECK(s == PK_OK && a.h.count == n5 && a.h.data_bytes == n5 * 8 &&
                     ((const double *)a.data)[n5 - 1] == 0, "5 GiB: %s", a.error);
        pk_npy_close(&a);
    } else {
        printf("note: no sparse 5 GiB file here; that case skipped\n");
    }
    unlink(path);
}

static void test_misaligned(void)
{
    /* header length 51: the data starts at byte 61, not a multiple of 8 */
    const char *text = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}   ";
    npy_case c = {"misaligned", 1, text, strlen(text), 24, NULL};
    size_t len;
    unsigned char *f = npy_case_file(&c, &len);
    const double vals[3] = {1.5, -2.25, 1e300};
    memcpy(f + len - 24, vals, 24);
    char path[600];
    path_in_dir(path, sizeof path, "misaligned.npy");
    write_file(path, f, len);
    pk_npy_array a;
    pk_status s = pk_npy_open(&a, path, 0);
    PK_CHECK(s == PK_OK && a.h.data_offset % 8 != 0 && (uintptr_t)a.data % 8 == 0 &&
                 memcmp(a.data, vals, 24) == 0, "misaligned data: %s", a.error);
    pk_npy_close(&a);
    unlink(path);
    free(f);
}

static void test_open_errors(void)
{
    char path[600];
    pk_npy_array a;
    path_in_dir(path, sizeof path, "absent.npy");
    PK_CHECK(pk_npy_open(&a, path, 0) == PK_ERR_IO && strstr(a.error, "No such file"), "%s",
             a.error);
    PK_CHECK(pk_npy_open(&a, dir, 0) == PK_ERR_IO && strstr(a.error, "not a regular file"), "%s",
             a.error);
    PK_CHECK(pk_npy_open(&a, "/dev/null", 0) == PK_ERR_IO && strstr(a.error, "not a regular"),
             "%s", a.error);
    path_in_dir(path, sizeof path, "empty.npy");
    write_file(path, "", 0);
    PK_CHECK(pk_npy_open(&a, path, 0) == PK_ERR_IO && strstr(a.error, "empty file"), "%s",
             a.error);
    unlink(path);
    PK_CHECK(pk_npy_open(&a, NULL, 0) == PK_ERR_ARG, "NULL path");
    pk_npy_close(&a);
    pk_npy_close(NULL);
}

static void test_writer(void)
{
    char path[600], err[PK_NPY_ERR_LEN];
    const int64_t shape[2] = {2, 3};
    const float data[6] = {1, 2, 3, 4, 5, -0.0f};
    const int before = dir_entries();
    /* a missing directory */
    path_in_dir(path, sizeof path, "no/such/dir/out.npy");
    PK_CHECK(pk_npy_save(path, PK_NPY_F32, 2, shape, data, err, sizeof err) == PK_ERR_IO &&
                 strstr(err, path) && strstr(err, "cannot create") && one_line(err), "%s", err);
    /* the output is a directory: refused at create, nothing is left */
    path_in_dir(path, sizeof path, "adir");
    mkdir(path, 0755);
    PK_CHECK(pk_npy_save(path, PK_NPY_F32, 2, shape, data, err, sizeof err) == PK_ERR_IO &&
                 strstr(err, "is a directory") && one_line(err), "%s", err);
    PK_CHECK(dir_entries() == before + 1, "a temporary file was left (%d entries)", dir_entries());
    rmdir(path);
    /* finish writes and checks without renaming; a target that became a
     * directory meanwhile fails there, the temporary file gone at discard */
    pk_npy_writer w;
    path_in_dir(path, sizeof path, "late.npy");
    PK_CHECK(pk_npy_create(&w, path, PK_NPY_F32, 2, shape) == PK_OK, "%s", w.error);
    memcpy(w.data, data, sizeof data);
    PK_CHECK(pk_npy_publish(&w) == PK_ERR_ARG, "publish before finish");
    PK_CHECK(pk_npy_finish(&w) == PK_OK && access(path, F_OK) != 0 && pk_npy_writer_temp(&w) &&
                 access(pk_npy_writer_temp(&w), F_OK) == 0, "finished, not renamed: %s", w.error);
    PK_CHECK(pk_npy_publish(&w) == PK_OK && !pk_npy_writer_temp(&w) && access(path, F_OK) == 0,
             "published: %s", w.error);
    pk_npy_discard(&w);
    unlink(path);
    PK_CHECK(pk_npy_create(&w, path, PK_NPY_F32, 2, shape) == PK_OK, "%s", w.error);
    mkdir(path, 0755);
    PK_CHECK(pk_npy_finish(&w) == PK_ERR_IO && strstr(w.error, "is a directory"), "%s", w.error);
    pk_npy_discard(&w);
    rmdir(path);
    PK_CHECK(dir_entries() == before, "a temporary file was left (%d entries)", dir_entries());
    /* a new file: 0666 less the umask */
    mode_t old = umask(027);
    path_in_dir(path, sizeof path, "new.npy");
    PK_CHECK(pk_npy_save(path, PK_NPY_F32, 2, shape, data, err, sizeof err) == PK_OK, "%s", err);
    struct stat st;
    PK_CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640, "mode %o", st.st_mode & 0777);
    umask(old);
    /* replacing a file keeps its mode, and replaces it whole */
    chmod(path, 0600);
    const int64_t one = 1;
    PK_CHECK(pk_npy_save(path, PK_NPY_F64, 1, &one, (double[]){42}, err, sizeof err) == PK_OK,
             "%s", err);
    pk_npy_array a;
    PK_CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "kept mode %o",
             st.st_mode & 0777);
    PK_CHECK(pk_npy_open(&a, path, 0) == PK_OK && a.h.type == PK_NPY_F64 && a.h.count == 1 &&
                 *(const double *)a.data == 42, "replaced: %s", a.error);
    pk_npy_close(&a);
    /* create then discard: nothing left; the old file untouched */
    PK_CHECK(pk_npy_create(&w, path, PK_NPY_F32, 2, shape) == PK_OK, "%s", w.error);
    PK_CHECK(pk_npy_writer_temp(&w) && access(pk_npy_writer_temp(&w), F_OK) == 0, "temp exists");
    memcpy(w.data, data, sizeof data);
    pk_npy_discard(&w);
    PK_CHECK(dir_entries() == before + 1, "discard left a temporary");
    PK_CHECK(pk_npy_open(&a, path, 0) == PK_OK && a.h.type == PK_NPY_F64, "discard replaced it");
    pk_npy_close(&a);
    /* create, fill, commit */
    PK_CHECK(pk_npy_create(&w, path, PK_NPY_F32, 2, shape) == PK_OK, "%s", w.error);
    memcpy(w.data, data, sizeof data);
    PK_CHECK(pk_npy_commit(&w) == PK_OK && !pk_npy_writer_temp(&w), "commit: %s", w.error);
    pk_npy_discard(&w); /* after commit: frees only */
    PK_CHECK(pk_npy_open(&a, path, 0) == PK_OK && a.h.ndim == 2 && memcmp(a.data, data, 24) == 0,
             "committed: %s", a.error);
    pk_npy_close(&a);
    PK_CHECK(dir_entries() == before + 1, "commit left a temporary");
    /* a relative path (no directory part) */
    char cwd[600];
    if (getcwd(cwd, sizeof cwd) && chdir(dir) == 0) {
        PK_CHECK(pk_npy_save("rel.npy", PK_NPY_U8, 0, NULL, (uint8_t[]){7}, err, sizeof err) ==
                     PK_OK, "relative: %s", err);
        PK_CHECK(access("rel.npy", F_OK) == 0 && chdir(cwd) == 0, "relative file");
        path_in_dir(path, sizeof path, "rel.npy");
        unlink(path);
    }
    path_in_dir(path, sizeof path, "new.npy");
    unlink(path);
    PK_CHECK(dir_entries() == before, "files left: %d", dir_entries() - before);
    /* bad arguments */
    PK_CHECK(pk_npy_create(&w, "", PK_NPY_F32, 1, &one) == PK_ERR_ARG, "empty path");
    pk_npy_discard(&w);
    PK_CHECK(pk_npy_create(&w, path, PK_NPY_TYPE_COUNT, 1, &one) == PK_ERR_ARG, "bad type");
    pk_npy_discard(&w);
    PK_CHECK(pk_npy_save(path, PK_NPY_F32, 1, &one, NULL, err, sizeof err) == PK_ERR_ARG, "no data");
    PK_CHECK(access(path, F_OK) != 0 && dir_entries() == before, "bad arguments left a file");
    PK_CHECK(strcmp(pk_npy_type_name(PK_NPY_TYPE_COUNT), "?") == 0 &&
                 strcmp(pk_npy_type_descr(PK_NPY_U16), "<u2") == 0 &&
                 pk_npy_type_size(PK_NPY_BOOL) == 1, "type table");
}

int main(void)
{
    pk_test_init("test_npy");
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/pk_test_npy.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        printf("FAIL: mkdtemp %s\n", dir);
        return 1;
    }
    test_cases();
    test_truncation();
    test_roundtrip();
    test_big();
    test_misaligned();
    test_open_errors();
    test_writer();
    PK_CHECK(dir_entries() == 0, "files left in %s", dir);
    rmdir(dir);
    return pk_test_finish("test_npy");
}
