/* Host CPU facts for `pk info` and the bench header (sysinfo.h). */
#include "sysinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The first line of a small file, newline removed; 0 on success. */
static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (!ok) return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

static long read_long(const char *path, long fallback)
{
    char buf[64];
    return read_line(path, buf, sizeof buf) == 0 ? atol(buf) : fallback;
}

/* "96K" / "4096K" / "260M" as in sysfs cache size files. */
static int64_t parse_size(const char *s)
{
    char *end;
    int64_t v = strtoll(s, &end, 10);
    if (*end == 'K') v <<= 10;
    else if (*end == 'M') v <<= 20;
    else if (*end == 'G') v <<= 30;
    return v;
}

/* The number of CPUs in a list such as "0-3,8,10-11". */
static int count_cpu_list(const char *s)
{
    int count = 0;
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s) break;
        if (*end == '-') b = strtol(end + 1, &end, 10);
        count += (int)(b - a + 1);
        s = *end == ',' ? end + 1 : end;
    }
    return count;
}

static void read_model(pk_sysinfo *s)
{
    snprintf(s->model, sizeof s->model, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        char *v = strchr(line, ':');
        if (!v) continue;
        v += 1 + strspn(v + 1, " \t");
        v[strcspn(v, "\n")] = '\0';
        snprintf(s->model, sizeof s->model, "%s", v);
        break;
    }
    fclose(f);
}

static void read_topology(pk_sysinfo *s)
{
    enum { MAXC = 4096 };
    static long keys[MAXC];
    int nkeys = 0, maxpkg = -1;
    for (int c = 0; c < MAXC && nkeys < MAXC; c++) {
        char path[128];
        snprintf(path, sizeof path,
                 "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
        long core = read_long(path, -1);
        if (core < 0) continue;
        snprintf(path, sizeof path,
                 "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
        long pkg = read_long(path, 0);
        if (pkg > maxpkg) maxpkg = (int)pkg;
        long key = pkg * 1000000 + core;
        int seen = 0;
        for (int k = 0; k < nkeys && !seen; k++) seen = keys[k] == key;
        if (!seen) keys[nkeys++] = key;
    }
    s->cores = nkeys ? nkeys : s->logical_cpus;
    s->sockets = maxpkg >= 0 ? maxpkg + 1 : 1;
}

static void read_caches(pk_sysinfo *s)
{
    for (int i = 0; s->ncaches < PK_MAX_CACHES; i++) {
        char dir[96], path[160], buf[128];
        snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu0/cache/index%d", i);
        snprintf(path, sizeof path, "%s/level", dir);
        if (read_line(path, buf, sizeof buf) != 0) break;
        pk_cache_info *c = &s->caches[s->ncaches++];
        c->level = atoi(buf);
        snprintf(path, sizeof path, "%s/type", dir);
        if (read_line(path, c->type, sizeof c->type) != 0)
            snprintf(c->type, sizeof c->type, "?");
        snprintf(path, sizeof path, "%s/size", dir);
        c->size = read_line(path, buf, sizeof buf) == 0 ? parse_size(buf) : 0;
        snprintf(path, sizeof path, "%s/coherency_line_size", dir);
        c->line = (int)read_long(path, 0);
        snprintf(path, sizeof path, "%s/shared_cpu_list", dir);
        c->shared_cpus = read_line(path, buf, sizeof buf) == 0 ? count_cpu_list(buf) : 0;
    }
}

void pk_sysinfo_read(pk_sysinfo *s)
{
    memset(s, 0, sizeof *s);
    read_model(s);
    s->logical_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    read_topology(s);
    read_caches(s);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    s->mem_bytes = pages > 0 && page > 0 ? (int64_t)pages * page : 0;
}

/* The same tests as the library's path choice (src/cpu/isa.c). */
const char *const pk_isa_names[] = {"avx512", "avx2", "generic"};
const int pk_isa_count = 3;

int pk_isa_supported(const char *name)
{
    __builtin_cpu_init();
    if (strcmp(name, "avx512") == 0)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("fma");
    if (strcmp(name, "avx2") == 0)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return 1;
}
