/* .npy headers: parse and check one (pk_npy_parse), format one
 * (pk_npy_format_header). No I/O here: the fuzzer runs this file alone. */
#include "npy.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .npy reader maps little-endian data as it is: a big-endian host needs byte swaps"
#endif

static const struct npy_type_info {
    char kind;          /* NumPy's kind letter */
    int size;           /* bytes */
    const char *name;   /* pk's name */
    const char *descr;  /* what headers say */
    const char *numpy;  /* NumPy's name, also accepted as descr */
} types[PK_NPY_TYPE_COUNT] = {
    [PK_NPY_F32] = {'f', 4, "f32", "<f4", "float32"},
    [PK_NPY_F64] = {'f', 8, "f64", "<f8", "float64"},
    [PK_NPY_I32] = {'i', 4, "i32", "<i4", "int32"},
    [PK_NPY_I64] = {'i', 8, "i64", "<i8", "int64"},
    [PK_NPY_U32] = {'u', 4, "u32", "<u4", "uint32"},
    [PK_NPY_U64] = {'u', 8, "u64", "<u8", "uint64"},
    [PK_NPY_U8] = {'u', 1, "u8", "|u1", "uint8"},
    [PK_NPY_U16] = {'u', 2, "u16", "<u2", "uint16"},
    [PK_NPY_BOOL] = {'b', 1, "bool", "|b1", "bool"},
};
_Static_assert(PK_NPY_F32 == (int)PK_F32 && PK_NPY_F64 == (int)PK_F64 &&
                   PK_NPY_I32 == (int)PK_I32 && PK_NPY_I64 == (int)PK_I64 &&
                   PK_NPY_U32 == (int)PK_U32 && PK_NPY_U64 == (int)PK_U64,
               "pk_npy_type starts with pk_dtype's values");

static int valid_type(pk_npy_type t) { return (unsigned)t < PK_NPY_TYPE_COUNT; }
const char *pk_npy_type_name(pk_npy_type t) { return valid_type(t) ? types[t].name : "?"; }
const char *pk_npy_type_descr(pk_npy_type t) { return valid_type(t) ? types[t].descr : "?"; }
size_t pk_npy_type_size(pk_npy_type t) { return valid_type(t) ? (size_t)types[t].size : 0; }

static const char magic[6] = "\x93NUMPY";

/* ---- Parsing ------------------------------------------------------------ */

typedef struct parser {
    const unsigned char *p, *end;
    size_t base;  /* file offset of the header's first byte (for messages) */
    const unsigned char *start;
    int version;
    char *err;
    size_t errlen;
} parser;

static void say(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* A file's text quoted in a message: printable ASCII, at most 40 bytes. */
static void quote(char *out, size_t outlen, const unsigned char *s, size_t n)
{
    size_t j = 0;
    for (size_t i = 0; i < n && j + 4 < outlen; i++)
        out[j++] = s[i] >= 0x20 && s[i] < 0x7f ? (char)s[i] : '?';
    if (j + 4 >= outlen && n > j) out[j++] = '.', out[j++] = '.', out[j++] = '.';
    out[j] = 0;
}

static long pos(const parser *ps) { return (long)(ps->base + (size_t)(ps->p - ps->start)); }

static int malformed(parser *ps, const char *expected)
{
    char near[48];
    if (ps->p >= ps->end) {
        say(ps->err, ps->errlen, "malformed header: it ends where %s was expected", expected);
    } else {
        quote(near, sizeof near, ps->p, (size_t)(ps->end - ps->p) < 12 ? (size_t)(ps->end - ps->p) : 12);
        say(ps->err, ps->errlen, "malformed header at byte %ld: expected %s, found '%s'",
            pos(ps), expected, near);
    }
    return -1;
}

/* Python's whitespace between tokens (NumPy's header is a Python literal). */
static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' ||
                               *ps->p == '\r' || *ps->p == '\f'))
        ps->p++;
}

static int expect(parser *ps, char c, const char *what)
{
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != (unsigned char)c) return malformed(ps, what);
    ps->p++;
    return 0;
}

/* A quoted string without escapes (the keys and dtype codes have none):
 * its bytes in [*s, *s + *n). */
static int read_string(parser *ps, const unsigned char **s, size_t *n, const char *what)
{
    skip_ws(ps);
    if (ps->p >= ps->end || (*ps->p != '\'' && *ps->p != '"')) return malformed(ps, what);
    const unsigned char q = *ps->p++;
    *s = ps->p;
    while (ps->p < ps->end && *ps->p != q) {
        if (*ps->p == '\\' || *ps->p == '\n' || *ps->p == '\r')
            return malformed(ps, "a string without escapes or line breaks");
        ps->p++;
    }
    if (ps->p >= ps->end) return malformed(ps, "the string's closing quote");
    *n = (size_t)(ps->p - *s);
    ps->p++;
    return 0;
}

static int is_name_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

static int read_bool(parser *ps, int *v)
{
    skip_ws(ps);
    const unsigned char *s = ps->p;
    while (ps->p < ps->end && is_name_char(*ps->p)) ps->p++;
    size_t n = (size_t)(ps->p - s);
    if (n == 4 && memcmp(s, "True", 4) == 0) *v = 1;
    else if (n == 5 && memcmp(s, "False", 5) == 0) *v = 0;
    else {
        ps->p = s;
        return malformed(ps, "True or False for 'fortran_order'");
    }
    return 0;
}

/* A dimension: a decimal integer as Python writes it (no leading zeros),
 * with Python 2's L suffix in versions 1 and 2 (NumPy reads those too). */
static int read_dim(parser *ps, int64_t *v)
{
    skip_ws(ps);
    const unsigned char *s = ps->p;
    int neg = ps->p < ps->end && *ps->p == '-';
    if (neg) {
        ps->p++;
        skip_ws(ps);
    }
    const unsigned char *digits = ps->p;
    uint64_t x = 0;
    int big = 0;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
        unsigned d = (unsigned)(*ps->p++ - '0');
        if (x > ((uint64_t)INT64_MAX - d) / 10) big = 1;
        else x = x * 10 + d;
    }
    size_t n = (size_t)(ps->p - digits);
    if (n == 0) return malformed(ps, "an integer dimension");
    if (n > 1 && digits[0] == '0') {
        ps->p = digits;
        return malformed(ps, "a dimension without leading zeros");
    }
    if (ps->version < 3 && ps->p < ps->end && (*ps->p == 'L' || *ps->p == 'l')) ps->p++;
    if (ps->p < ps->end && is_name_char(*ps->p)) return malformed(ps, "a decimal integer dimension");
    char text[48];
    quote(text, sizeof text, s, (size_t)(ps->p - s));
    if (neg && x != 0) {
        say(ps->err, ps->errlen, "negative dimension %s in the shape", text);
        return -1;
    }
    if (big) {
        say(ps->err, ps->errlen, "dimension %s in the shape is too large", text);
        return -1;
    }
    *v = (int64_t)x;
    return 0;
}

/* shape: a tuple of dimensions: (), (3,), (3, 4) or (3, 4,). */
static int read_shape(parser *ps, pk_npy_header *h)
{
    if (expect(ps, '(', "'(' opening the shape tuple") != 0) return -1;
    h->ndim = 0;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ')') {
        ps->p++;
        return 0;
    }
    for (;;) {
        int64_t d = 0;
        if (read_dim(ps, &d) != 0) return -1;
        if (h->ndim == PK_NPY_MAX_DIMS) {
            say(ps->err, ps->errlen, "the shape has more than %d dimensions", PK_NPY_MAX_DIMS);
            return -1;
        }
        h->shape[h->ndim++] = d;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            skip_ws(ps);
            if (ps->p < ps->end && *ps->p == ')') {
                ps->p++;
                return 0;
            }
            continue;
        }
        if (ps->p < ps->end && *ps->p == ')') {
            ps->p++;
            if (h->ndim == 1) {
                say(ps->err, ps->errlen, "the shape (%lld) is not a tuple (one dimension is "
                    "written (%lld,))", (long long)d, (long long)d);
                return -1;
            }
            return 0;
        }
        return malformed(ps, "',' or ')' in the shape");
    }
}

/* descr: a dtype code ('<f4', '|u1', 'f4') or NumPy name ('float32'). */
static int read_descr(parser *ps, pk_npy_header *h)
{
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '[') {
        say(ps->err, ps->errlen, "structured dtype (a list of fields): pk reads arrays of "
            "plain numbers");
        return -1;
    }
    const unsigned char *s;
    size_t n;
    if (read_string(ps, &s, &n, "a dtype string for 'descr'") != 0) return -1;
    char text[48];
    quote(text, sizeof text, s, n);
    for (int t = 0; t < PK_NPY_TYPE_COUNT; t++)
        if (strlen(types[t].numpy) == n && memcmp(s, types[t].numpy, n) == 0) {
            h->type = (pk_npy_type)t;
            return 0;
        }
    size_t i = 0;
    char order = n && s[0] && strchr("<>|=", s[0]) ? (char)s[i++] : '=';
    int size = 0;
    char kind = i < n ? (char)s[i++] : 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9' && size < 1000; i++) size = size * 10 + (s[i] - '0');
    if (i == n && kind)
        for (int t = 0; t < PK_NPY_TYPE_COUNT; t++) {
            if (types[t].kind != kind || types[t].size != size) continue;
            if (order == '>' && size > 1) {
                say(ps->err, ps->errlen, "big-endian dtype '%s': pk reads little-endian data "
                    "(convert with a.astype('%s'))", text, types[t].descr);
                return -1;
            }
            h->type = (pk_npy_type)t;
            return 0;
        }
    if (kind == 'O')
        say(ps->err, ps->errlen, "object array (dtype '%s'): pk reads arrays of plain numbers", text);
    else
        say(ps->err, ps->errlen, "unsupported dtype '%s' (pk reads f4 f8 i4 i8 u4 u8 u1 u2 b1)", text);
    return -1;
}

static const char *const keys[3] = {"descr", "fortran_order", "shape"};

/* The dict literal in [ps->p, ps->end). */
static int read_dict(parser *ps, pk_npy_header *h, int *fortran)
{
    int seen = 0;
    if (expect(ps, '{', "'{' opening the header's dictionary") != 0) return -1;
    for (;;) {
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == '}') {
            ps->p++;
            break;
        }
        const unsigned char *s;
        size_t n;
        if (read_string(ps, &s, &n, "a quoted key or '}'") != 0) return -1;
        int k = 0;
        while (k < 3 && !(strlen(keys[k]) == n && memcmp(s, keys[k], n) == 0)) k++;
        char text[48];
        quote(text, sizeof text, s, n);
        if (k == 3) {
            say(ps->err, ps->errlen, "unexpected key '%s' in the header (a .npy header has "
                "descr, fortran_order and shape)", text);
            return -1;
        }
        if (seen >> k & 1) {
            say(ps->err, ps->errlen, "the header gives '%s' twice", text);
            return -1;
        }
        seen |= 1 << k;
        if (expect(ps, ':', "':' after a key") != 0) return -1;
        int rc = k == 0 ? read_descr(ps, h) : k == 1 ? read_bool(ps, fortran) : read_shape(ps, h);
        if (rc != 0) return -1;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') ps->p++;
        else if (ps->p < ps->end && *ps->p == '}') continue;
        else return malformed(ps, "',' or '}' after a value");
    }
    for (int k = 0; k < 3; k++)
        if (!(seen >> k & 1)) {
            say(ps->err, ps->errlen, "the header has no '%s'", keys[k]);
            return -1;
        }
    skip_ws(ps);
    if (ps->p < ps->end) return malformed(ps, "nothing but whitespace after the dictionary");
    return 0;
}

/* count and bytes of a shape; -1 when the byte count overflows int64
 * (checked over the nonzero dimensions, so that a zero cannot hide it). */
static int shape_bytes(pk_npy_type t, int ndim, const int64_t *shape, int64_t *count,
                       int64_t *bytes)
{
    const int64_t size = (int64_t)types[t].size;
    int64_t nonzero = 1, zero = 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return -1;
        if (shape[i] == 0) {
            zero = 1;
            continue;
        }
        if (nonzero > INT64_MAX / size / shape[i]) return -1;
        nonzero *= shape[i];
    }
    *count = zero ? 0 : nonzero;
    *bytes = *count * size;
    return 0;
}

pk_status pk_npy_parse(const void *buf, size_t len, pk_npy_header *h, char *err, size_t errlen)
{
    const unsigned char *b = buf;
    if (err && errlen) err[0] = 0;
    if (!b || !h) {
        say(err, errlen, "no buffer");
        return PK_ERR_ARG;
    }
    memset(h, 0, sizeof *h);
    if (memcmp(b, magic, len < 6 ? len : 6) != 0) {
        say(err, errlen, "not a .npy file (it does not start with \\x93NUMPY)");
        return PK_ERR_IO;
    }
    if (len < 10) {
        say(err, errlen, "truncated: %zu bytes, shorter than a .npy preamble", len);
        return PK_ERR_IO;
    }
    if (b[6] < 1 || b[6] > 3 || b[7] != 0) {
        say(err, errlen, "unsupported .npy format version %u.%u (pk reads 1.0, 2.0 and 3.0)",
            b[6], b[7]);
        return PK_ERR_IO;
    }
    h->version = b[6];
    const size_t pre = h->version == 1 ? 10 : 12;
    if (len < pre) {
        say(err, errlen, "truncated: %zu bytes, shorter than a version %d preamble", len,
            h->version);
        return PK_ERR_IO;
    }
    const uint64_t hlen = h->version == 1 ? (uint64_t)b[8] | (uint64_t)b[9] << 8
                                          : (uint64_t)b[8] | (uint64_t)b[9] << 8 |
                                                (uint64_t)b[10] << 16 | (uint64_t)b[11] << 24;
    if (hlen > len - pre) {
        say(err, errlen, "the header length %llu runs past the end of the file (%zu bytes)",
            (unsigned long long)hlen, len);
        return PK_ERR_IO;
    }
    parser ps = {.p = b + pre, .end = b + pre + hlen, .base = pre, .start = b + pre,
                 .version = h->version, .err = err, .errlen = errlen};
    int fortran = 0;
    if (read_dict(&ps, h, &fortran) != 0) return PK_ERR_IO;
    if (fortran) { /* the same bytes as C order when at most one dimension exceeds 1 */
        int big = 0;
        for (int i = 0; i < h->ndim; i++) big += h->shape[i] > 1;
        if (big > 1) {
            say(err, errlen, "Fortran-order (column-major) array: pk reads C order (save "
                "np.ascontiguousarray(a))");
            return PK_ERR_IO;
        }
    }
    if (shape_bytes(h->type, h->ndim, h->shape, &h->count, &h->data_bytes) != 0) {
        say(err, errlen, "the shape's byte count overflows (a lying header)");
        return PK_ERR_IO;
    }
    h->data_offset = (int64_t)(pre + hlen);
    if ((uint64_t)h->data_bytes > len - (pre + hlen)) {
        say(err, errlen, "truncated: the shape needs %lld bytes of data, the file has %llu",
            (long long)h->data_bytes, (unsigned long long)(len - (pre + hlen)));
        return PK_ERR_IO;
    }
    return PK_OK;
}

/* ---- Formatting --------------------------------------------------------- */

pk_status pk_npy_header_init(pk_npy_header *h, pk_npy_type t, int ndim, const int64_t *shape)
{
    if (!h || !valid_type(t) || ndim < 0 || ndim > PK_NPY_MAX_DIMS || (ndim && !shape))
        return PK_ERR_ARG;
    memset(h, 0, sizeof *h);
    h->version = 1, h->type = t, h->ndim = ndim;
    if (ndim) memcpy(h->shape, shape, (size_t)ndim * sizeof *shape);
    return shape_bytes(t, ndim, shape, &h->count, &h->data_bytes) == 0 ? PK_OK : PK_ERR_ARG;
}

size_t pk_npy_format_header(char *buf, size_t len, int version, pk_npy_type t, int ndim,
                            const int64_t *shape)
{
    pk_npy_header h;
    if (!buf || version < 0 || version > 3 || pk_npy_header_init(&h, t, ndim, shape) != PK_OK)
        return 0;
    char dict[PK_NPY_MAX_DIMS * 22 + 96];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                     types[t].descr);
    for (int i = 0; i < ndim; i++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%lld", i ? ", " : "",
                      (long long)shape[i]);
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", ndim == 1 ? "," : "");
    /* preamble + dict + newline, padded to 64 bytes (NumPy's alignment) */
    size_t total = ((size_t)(10 + n + 1) + 63) & ~(size_t)63;
    if (version == 0) version = total - 10 <= 65535 ? 1 : 2;
    const size_t pre = version == 1 ? 10 : 12;
    total = (pre + (size_t)n + 1 + 63) & ~(size_t)63;
    const size_t hlen = total - pre;
    if ((version == 1 && hlen > 65535) || total > len) return 0;
    memcpy(buf, magic, 6);
    buf[6] = (char)version, buf[7] = 0;
    for (size_t i = 0; i < pre - 8; i++) buf[8 + i] = (char)(hlen >> (8 * i) & 0xff);
    memcpy(buf + pre, dict, (size_t)n);
    memset(buf + pre + n, ' ', hlen - (size_t)n - 1);
    buf[total - 1] = '\n';
    return total;
}
