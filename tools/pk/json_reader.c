/* A small JSON reader: recursive descent over a buffer (json_reader.h). */
#include "json_reader.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct parser {
    const char *s, *end;
    int depth, failed;
    char *err;
    size_t errlen;
    const char *start;
} parser;

static void fail(parser *p, const char *what)
{
    if (p->failed) return;
    p->failed = 1;
    int line = 1;
    for (const char *c = p->start; c < p->s && c < p->end; c++) line += *c == '\n';
    if (p->s >= p->end)
        snprintf(p->err, p->errlen, "line %d: unexpected end (%s)", line, what);
    else
        snprintf(p->err, p->errlen, "line %d: %s", line, what);
}

static void skip_space(parser *p)
{
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
        p->s++;
}

static int literal(parser *p, const char *word)
{
    size_t len = strlen(word);
    if ((size_t)(p->end - p->s) < len || memcmp(p->s, word, len) != 0) return 0;
    p->s += len;
    return 1;
}

static int hex4(parser *p, unsigned *out)
{
    *out = 0;
    for (int i = 0; i < 4; i++, p->s++) {
        if (p->s >= p->end) return 0;
        char c = *p->s;
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (d > 15) return 0;
        *out = *out * 16 + d;
    }
    return 1;
}

/* A string (after its opening quote) into a new buffer. */
static char *string(parser *p)
{
    size_t cap = 16, n = 0;
    char *out = malloc(cap);
    while (out && !p->failed) {
        if (p->s >= p->end) {
            fail(p, "unterminated string");
            break;
        }
        unsigned char c = (unsigned char)*p->s++;
        char buf[4];
        size_t len = 1;
        if (c == '"') {
            out[n] = 0;
            return out;
        }
        if (c < 0x20) {
            fail(p, "control character in a string");
            break;
        }
        buf[0] = (char)c;
        if (c == '\\') {
            if (p->s >= p->end) {
                fail(p, "unterminated string");
                break;
            }
            char e = *p->s++;
            const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t", *at = strchr(from, e);
            if (e && at) {
                buf[0] = to[at - from];
            } else if (e == 'u') {
                unsigned u, lo;
                if (!hex4(p, &u)) {
                    fail(p, "bad \\u escape");
                    break;
                }
                if (u >= 0xD800 && u < 0xDC00 && literal(p, "\\u") && hex4(p, &lo) &&
                    lo >= 0xDC00 && lo < 0xE000)
                    u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                else if (u >= 0xD800 && u < 0xE000)
                    u = 0xFFFD; /* a lone surrogate */
                if (u < 0x80)
                    buf[0] = (char)u;
                else if (u < 0x800)
                    buf[0] = (char)(0xC0 | u >> 6), buf[1] = (char)(0x80 | (u & 63)), len = 2;
                else if (u < 0x10000)
                    buf[0] = (char)(0xE0 | u >> 12), buf[1] = (char)(0x80 | (u >> 6 & 63)),
                    buf[2] = (char)(0x80 | (u & 63)), len = 3;
                else
                    buf[0] = (char)(0xF0 | u >> 18), buf[1] = (char)(0x80 | (u >> 12 & 63)),
                    buf[2] = (char)(0x80 | (u >> 6 & 63)), buf[3] = (char)(0x80 | (u & 63)),
                    len = 4;
            } else {
                fail(p, "bad escape in a string");
                break;
            }
        }
        if (n + len + 1 > cap) {
            char *grown = realloc(out, cap *= 2);
            if (!grown) break;
            out = grown;
        }
        memcpy(out + n, buf, len);
        n += len;
    }
    if (!out || !p->failed) fail(p, "out of memory");
    free(out);
    return NULL;
}

static void number(parser *p, json *v)
{
    const char *s = p->s;
    if (s < p->end && *s == '-') s++;
    if (s >= p->end || *s < '0' || *s > '9') {
        fail(p, "expected a value");
        return;
    }
    /* strtod reads more than JSON allows (hex, inf): check the grammar. */
    if (*s == '0')
        s++;
    else
        while (s < p->end && *s >= '0' && *s <= '9') s++;
    if (s < p->end && *s == '.') {
        if (++s >= p->end || *s < '0' || *s > '9') {
            fail(p, "bad number");
            return;
        }
        while (s < p->end && *s >= '0' && *s <= '9') s++;
    }
    if (s < p->end && (*s == 'e' || *s == 'E')) {
        if (++s < p->end && (*s == '+' || *s == '-')) s++;
        if (s >= p->end || *s < '0' || *s > '9') {
            fail(p, "bad number");
            return;
        }
        while (s < p->end && *s >= '0' && *s <= '9') s++;
    }
    char buf[64];
    size_t len = (size_t)(s - p->s);
    if (len >= sizeof buf) {
        fail(p, "number too long");
        return;
    }
    memcpy(buf, p->s, len);
    buf[len] = 0;
    v->type = JSON_NUM;
    v->num = strtod(buf, NULL);
    p->s = s;
}

static void value(parser *p, json *v);

/* The items of an array or object, after the opening bracket. */
static void items(parser *p, json *v, char close)
{
    int cap = 0;
    skip_space(p);
    if (p->s < p->end && *p->s == close) {
        p->s++;
        return;
    }
    for (;;) {
        if (v->n == cap) {
            cap = cap ? 2 * cap : 8;
            json *it = realloc(v->items, (size_t)cap * sizeof *it);
            char **ks = close == '}' ? realloc(v->keys, (size_t)cap * sizeof *ks) : NULL;
            if (it) v->items = it;
            if (ks) v->keys = ks;
            if (!it || (close == '}' && !ks)) {
                fail(p, "out of memory");
                return;
            }
        }
        json *item = &v->items[v->n];
        memset(item, 0, sizeof *item);
        skip_space(p);
        if (close == '}') {
            if (p->s >= p->end || *p->s != '"') {
                fail(p, "expected a key in quotes");
                return;
            }
            p->s++;
            v->keys[v->n] = string(p);
            if (!v->keys[v->n]) return;
            skip_space(p);
            if (p->s >= p->end || *p->s != ':') {
                v->n++;
                fail(p, "expected ':' after a key");
                return;
            }
            p->s++;
        }
        v->n++;
        value(p, item);
        if (p->failed) return;
        skip_space(p);
        if (p->s < p->end && *p->s == ',') {
            p->s++;
            continue;
        }
        if (p->s < p->end && *p->s == close) {
            p->s++;
            return;
        }
        fail(p, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
        return;
    }
}

static void value(parser *p, json *v)
{
    skip_space(p);
    if (p->s >= p->end) {
        fail(p, "expected a value");
        return;
    }
    if (++p->depth > MAX_DEPTH) {
        fail(p, "nested too deeply");
        return;
    }
    char c = *p->s;
    if (c == '{' || c == '[') {
        p->s++;
        v->type = c == '{' ? JSON_OBJ : JSON_ARR;
        items(p, v, c == '{' ? '}' : ']');
    } else if (c == '"') {
        p->s++;
        v->type = JSON_STR;
        v->str = string(p);
    } else if (literal(p, "true") || literal(p, "false")) {
        v->type = JSON_BOOL;
        v->boolean = c == 't';
    } else if (literal(p, "null")) {
        v->type = JSON_NULL;
    } else {
        number(p, v);
    }
    p->depth--;
}

static void release(json *v)
{
    for (int i = 0; i < v->n; i++) {
        release(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
}

void json_free(json *v)
{
    if (!v) return;
    release(v);
    free(v);
}

json *json_parse(const char *text, size_t len, char *err, size_t errlen)
{
    parser p = {text, text + len, 0, 0, err, errlen, text};
    json *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    value(&p, v);
    skip_space(&p);
    if (!p.failed && p.s < p.end) fail(&p, "text after the value");
    if (p.failed) {
        json_free(v);
        return NULL;
    }
    return v;
}

const json *json_get(const json *v, const char *key)
{
    if (!v || v->type != JSON_OBJ) return NULL;
    for (int i = 0; i < v->n; i++)
        if (!strcmp(v->keys[i], key)) return &v->items[i];
    return NULL;
}

const char *json_str(const json *v)
{
    return v && v->type == JSON_STR ? v->str : NULL;
}

double json_num(const json *v)
{
    return v && v->type == JSON_NUM ? v->num : NAN;
}
