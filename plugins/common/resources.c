/*
 * resources.c - quantities, effective requests and allocatable.
 *
 * Quantities are parsed exactly: the digits go into a small decimal digit
 * array that is multiplied by the binary suffix and shifted by the decimal
 * exponent, and only the final integer part is converted to int64, with a
 * fraction rounding it up (Kubernetes' Value() and MilliValue() round up,
 * so "0.1m" of cpu is 1m and "1.5" bytes is 2). Going through doubles would
 * turn "0.1" into 100.000000000000006m and round it to 101m.
 */
#include "resources.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "values.h"

/* Enough for any mantissa a person writes, times 2^60, plus headroom. */
#define MAX_MANTISSA 64
#define MAX_DIGITS 128
/* Exponents beyond this either overflow or round to the smallest unit. */
#define MAX_EXPONENT 400

static const struct {
    const char *suffix;
    int exp10; /* decimal exponent */
    int exp2;  /* binary exponent */
} suffixes[] = {
    {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
    {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
    {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
};

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Multiply the big-endian digit string dig[0..*nd) by two. */
static void double_digits(unsigned char *dig, size_t *nd)
{
    int carry = 0;

    for (size_t i = *nd; i-- > 0;) {
        int d = dig[i] * 2 + carry;

        dig[i] = (unsigned char)(d % 10);
        carry = d / 10;
    }
    if (carry) {
        memmove(dig + 1, dig, *nd);
        dig[0] = (unsigned char)carry;
        (*nd)++;
    }
}

/* A quantity's text read as Kubernetes reads it: its significant digits
 * (no leading zero; none for zero), times 10^exp10 and 2^exp2, and its
 * sign. RES_OK or RES_ESYNTAX. */
typedef struct scanned {
    unsigned char dig[MAX_DIGITS];
    size_t nd;
    long exp10;
    int exp2, negative;
} scanned;

static int scan(const char *text, scanned *q)
{
    unsigned char *dig = q->dig;
    size_t nd = 0;
    long exp10 = 0;
    int exp2 = 0, negative = 0, seen_digit = 0, seen_point = 0;
    const char *p = text;

    if (!p)
        return RES_ESYNTAX;
    if (*p == '+' || *p == '-')
        negative = *p++ == '-';
    for (;; p++) {
        if (*p == '.' && !seen_point) {
            seen_point = 1;
        } else if (is_digit(*p)) {
            seen_digit = 1;
            if (nd == 0 && *p == '0') {
                /* leading zeros carry no digit, only their place */
                if (seen_point)
                    exp10--;
                continue;
            }
            if (nd == MAX_MANTISSA)
                return RES_ESYNTAX;
            dig[nd++] = (unsigned char)(*p - '0');
            if (seen_point)
                exp10--;
        } else {
            break;
        }
    }
    if (!seen_digit)
        return RES_ESYNTAX;

    /* "1e3" and "1E3" are exponents; "1E" alone is the exa suffix. */
    if ((*p == 'e' || *p == 'E') &&
        (is_digit(p[1]) || ((p[1] == '+' || p[1] == '-') && is_digit(p[2])))) {
        int eneg = 0;
        long e = 0;

        p++;
        if (*p == '+' || *p == '-')
            eneg = *p++ == '-';
        for (; is_digit(*p); p++) {
            if (e < MAX_EXPONENT * 10)
                e = e * 10 + (*p - '0');
        }
        if (*p != '\0')
            return RES_ESYNTAX;
        exp10 += eneg ? -e : e;
    } else {
        size_t i;

        for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
            if (strcmp(p, suffixes[i].suffix) == 0)
                break;
        }
        if (i == sizeof(suffixes) / sizeof(suffixes[0]))
            return RES_ESYNTAX;
        exp10 += suffixes[i].exp10;
        exp2 = suffixes[i].exp2;
    }
    q->nd = nd;
    q->exp10 = exp10;
    q->exp2 = exp2;
    q->negative = negative;
    return RES_OK;
}

int res_quantity_parse(const char *text, res_unit unit, int64_t *out)
{
    scanned q;
    int rc = scan(text, &q);
    if (rc != RES_OK)
        return rc;
    unsigned char *dig = q.dig;
    size_t nd = q.nd;
    long exp10 = q.exp10, int_len;
    int exp2 = q.exp2;
    int64_t v = 0;

    if (nd == 0) {
        *out = 0;
        return RES_OK;
    }
    if (q.negative)
        return RES_ENEGATIVE;
    if (unit == RES_UNIT_MILLI)
        exp10 += 3;
    if (exp10 > MAX_EXPONENT)
        return RES_ERANGE;
    if (exp10 < -MAX_EXPONENT)
        exp10 = -MAX_EXPONENT;
    for (int i = 0; i < exp2; i++)
        double_digits(dig, &nd);

    /* The value is dig * 10^exp10: its integer part has int_len digits. */
    int_len = (long)nd + exp10;
    if (int_len > 19)
        return RES_ERANGE;
    for (long i = 0; i < int_len; i++) {
        int d = (size_t)i < nd ? dig[i] : 0;

        if (v > (INT64_MAX - d) / 10)
            return RES_ERANGE;
        v = v * 10 + d;
    }
    for (size_t i = int_len > 0 ? (size_t)int_len : 0; i < nd; i++) {
        if (dig[i] != 0) {
            if (v == INT64_MAX)
                return RES_ERANGE;
            v++;
            break;
        }
    }
    *out = v;
    return RES_OK;
}

res_unit res_unit_of(const char *name)
{
    if (strcmp(name, "cpu") == 0)
        return RES_UNIT_MILLI;
    if (strcmp(name, "memory") == 0 || strcmp(name, "ephemeral-storage") == 0 ||
        strcmp(name, "storage") == 0 || strncmp(name, "hugepages-", 10) == 0)
        return RES_UNIT_BYTES;
    return RES_UNIT_COUNT;
}

int res_config_read(const trellis_host *h, const trellis_args *a, const char *list_key,
                    res_config *cfg, char *err, size_t errlen)
{
    size_t n = h->arg_list_len(a, list_key);

    memset(cfg, 0, sizeof(*cfg));
    cfg->pods_index = -1;
    cfg->containers_field = h->arg_string(a, "containers_field");
    cfg->init_containers_field = h->arg_string(a, "init_containers_field");
    cfg->overhead_field = h->arg_string(a, "overhead_field");
    cfg->allocatable_field = h->arg_string(a, "allocatable_field");
    if (values_check_path("containers_field", cfg->containers_field, err, errlen) < 0 ||
        values_check_path("init_containers_field", cfg->init_containers_field, err, errlen) < 0 ||
        values_check_path("overhead_field", cfg->overhead_field, err, errlen) < 0 ||
        values_check_path("allocatable_field", cfg->allocatable_field, err, errlen) < 0)
        return -1;
    if (n == 0 || n > RES_MAX) {
        snprintf(err, errlen, "%s: expected 1 to %d resource names, got %zu", list_key, RES_MAX, n);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = h->arg_list_at(a, list_key, i);

        if (!name || name[0] == '\0') {
            snprintf(err, errlen, "%s[%zu]: expected a resource name, got ''", list_key, i);
            return -1;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(cfg->names[j], name) == 0) {
                snprintf(err, errlen, "%s[%zu]: '%s' is listed twice", list_key, i, name);
                return -1;
            }
        }
        cfg->names[i] = name;
        cfg->unit[i] = res_unit_of(name);
        if (strcmp(name, "pods") == 0)
            cfg->pods_index = (int)i;
    }
    cfg->n = n;
    return 0;
}

static int index_of(const res_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->n; i++) {
        if (strcmp(cfg->names[i], name) == 0)
            return (int)i;
    }
    return -1;
}

/* A quantity written as a YAML number (`cpu: 2`, `cpu: 0.5`) arrives as an
 * int or a double; a double is printed with 15 significant digits, which
 * gives back the text a person wrote ("0.1", not "0.1000000000000000055"). */
int res_value_quantity(const trellis_host *h, const trellis_value *v, res_unit unit,
                       const char *path, int64_t *out, char *err, size_t errlen)
{
    trellis_value_type t = h->value_type(v);
    const char *text = NULL;
    char buf[64];
    double d;
    int rc;

    if (t == TRELLIS_VALUE_DOUBLE && h->value_double(v, &d) == 0) {
        snprintf(buf, sizeof(buf), "%.15g", d);
        text = buf;
    } else if (t == TRELLIS_VALUE_INT || t == TRELLIS_VALUE_STRING) {
        text = h->value_string(v);
    }
    if (!text) {
        snprintf(err, errlen, "%s: expected a quantity such as 500m, 2 or 1Gi, got %s", path,
                 values_type_name(t));
        return -1;
    }
    rc = res_quantity_parse(text, unit, out);
    if (rc == RES_OK)
        return 0;
    if (rc == RES_ERANGE)
        snprintf(err, errlen, "%s: quantity '%s' is too large", path, text);
    else if (rc == RES_ENEGATIVE)
        snprintf(err, errlen, "%s: expected a non-negative quantity, got '%s'", path, text);
    else
        snprintf(err, errlen, "%s: expected a quantity such as 500m, 2 or 1Gi, got '%s'", path,
                 text);
    return -1;
}

/* Walk state for one map of quantities (requests, limits, overhead,
 * allocatable). */
typedef struct amounts_ctx {
    const trellis_host *h;
    const res_config *cfg;
    const char *path; /* the map's path, for messages */
    int64_t *v;
    unsigned char *has;
    int skip_present; /* leave resources already in has[] alone */
    char *err;
    size_t errlen;
} amounts_ctx;

static int amount_member(const char *key, const trellis_value *v, void *ud)
{
    amounts_ctx *ctx = ud;
    int i = index_of(ctx->cfg, key);
    char path[300];

    /* Resources the profile does not count are not validated either: a
     * typo there is the business of whoever counts them. "pods" is never
     * requested, each workload is one pod. */
    if (i < 0 || i == ctx->cfg->pods_index)
        return 0;
    if (ctx->skip_present && ctx->has[i])
        return 0;
    /* Resource names such as "nvidia.com/gpu" contain dots, so they are
     * named in the bracket form of the host's paths. */
    values_member_path(path, sizeof(path), ctx->path, key, ".");
    if (res_value_quantity(ctx->h, v, ctx->cfg->unit[i], path, &ctx->v[i], ctx->err, ctx->errlen) <
        0)
        return -1;
    ctx->has[i] = 1;
    return 0;
}

/* Parse a map of quantities found at `path` into v/has; absent or null is
 * an empty map. */
static int read_amounts(const trellis_host *h, const res_config *cfg, const trellis_value *map,
                        const char *path, int64_t *v, unsigned char *has, int skip_present,
                        char *err, size_t errlen)
{
    amounts_ctx ctx;
    int rc = values_expect(h, map, TRELLIS_VALUE_MAP, "a map of quantities", path, err, errlen);

    if (rc <= 0)
        return rc;
    ctx.h = h;
    ctx.cfg = cfg;
    ctx.path = path;
    ctx.v = v;
    ctx.has = has;
    ctx.skip_present = skip_present;
    ctx.err = err;
    ctx.errlen = errlen;
    return h->value_foreach(map, amount_member, &ctx) ? -1 : 0;
}

/* One container's requests; a resource with a limit but no request
 * requests its limit, as the API server's defaulting makes it. */
static int container_requests(const trellis_host *h, const res_config *cfg, const trellis_value *c,
                              const char *path, int64_t *v, char *err, size_t errlen)
{
    unsigned char has[RES_MAX] = {0};
    const trellis_value *res;
    char sub[300];

    memset(v, 0, sizeof(*v) * RES_MAX);
    if (h->value_type(c) != TRELLIS_VALUE_MAP) {
        snprintf(err, errlen, "%s: expected a map, got %s", path,
                 values_type_name(h->value_type(c)));
        return -1;
    }
    res = h->value_get(c, "resources");
    if (!res || h->value_type(res) == TRELLIS_VALUE_NULL)
        return 0;
    if (h->value_type(res) != TRELLIS_VALUE_MAP) {
        snprintf(err, errlen, "%s.resources: expected a map, got %s", path,
                 values_type_name(h->value_type(res)));
        return -1;
    }
    snprintf(sub, sizeof(sub), "%s.resources.requests", path);
    if (read_amounts(h, cfg, h->value_get(res, "requests"), sub, v, has, 0, err, errlen) < 0)
        return -1;
    snprintf(sub, sizeof(sub), "%s.resources.limits", path);
    return read_amounts(h, cfg, h->value_get(res, "limits"), sub, v, has, 1, err, errlen);
}

static int add_checked(const res_config *cfg, int64_t *acc, const int64_t *add, const char *path,
                       char *err, size_t errlen)
{
    for (size_t i = 0; i < cfg->n; i++) {
        if (add[i] > INT64_MAX - acc[i]) {
            snprintf(err, errlen, "%s: total %s request is too large", path, cfg->names[i]);
            return -1;
        }
    }
    for (size_t i = 0; i < cfg->n; i++)
        acc[i] += add[i];
    return 0;
}

/* The value at `field`, which must be a list when present. */
static int get_list(const trellis_host *h, const trellis_object *w, const char *field,
                    const trellis_value **out, char *err, size_t errlen)
{
    const trellis_value *v = h->object_get(w, field);
    int rc = values_expect(h, v, TRELLIS_VALUE_LIST, "a list", field, err, errlen);

    *out = rc > 0 ? v : NULL;
    return rc < 0 ? -1 : 0;
}

int res_workload_requests(const trellis_host *h, const res_config *cfg, const trellis_object *w,
                          res_amounts *out, char *err, size_t errlen)
{
    int64_t one[RES_MAX], sidecars[RES_MAX] = {0}, init_max[RES_MAX] = {0};
    int64_t overhead[RES_MAX] = {0};
    unsigned char has[RES_MAX] = {0};
    const trellis_value *list;
    char path[300];

    memset(out, 0, sizeof(*out) + cfg->n * sizeof(*out->v));
    out->n = (uint32_t)cfg->n;
    if (get_list(h, w, cfg->containers_field, &list, err, errlen) < 0)
        return -1;
    for (size_t i = 0; list && i < h->value_len(list); i++) {
        snprintf(path, sizeof(path), "%s[%zu]", cfg->containers_field, i);
        if (container_requests(h, cfg, h->value_at(list, i), path, one, err, errlen) < 0 ||
            add_checked(cfg, out->v, one, path, err, errlen) < 0)
            return -1;
    }

    /* Init containers run one after another before the others, so the
     * workload needs the largest of them; a sidecar (restartPolicy Always)
     * keeps running, so it adds to the containers and to every init
     * container that starts after it. */
    if (get_list(h, w, cfg->init_containers_field, &list, err, errlen) < 0)
        return -1;
    for (size_t i = 0; list && i < h->value_len(list); i++) {
        const trellis_value *c = h->value_at(list, i);
        const trellis_value *rp;
        const char *policy;

        snprintf(path, sizeof(path), "%s[%zu]", cfg->init_containers_field, i);
        if (container_requests(h, cfg, c, path, one, err, errlen) < 0)
            return -1;
        rp = h->value_get(c, "restartPolicy");
        policy = rp ? h->value_string(rp) : NULL;
        if (policy && strcmp(policy, "Always") == 0) {
            if (add_checked(cfg, out->v, one, path, err, errlen) < 0 ||
                add_checked(cfg, sidecars, one, path, err, errlen) < 0)
                return -1;
            memcpy(one, sidecars, sizeof(one));
        } else if (add_checked(cfg, one, sidecars, path, err, errlen) < 0) {
            return -1;
        }
        for (size_t r = 0; r < cfg->n; r++) {
            if (one[r] > init_max[r])
                init_max[r] = one[r];
        }
    }
    for (size_t r = 0; r < cfg->n; r++) {
        if (init_max[r] > out->v[r])
            out->v[r] = init_max[r];
    }

    if (read_amounts(h, cfg, h->object_get(w, cfg->overhead_field), cfg->overhead_field, overhead,
                     has, 0, err, errlen) < 0 ||
        add_checked(cfg, out->v, overhead, cfg->overhead_field, err, errlen) < 0)
        return -1;
    if (cfg->pods_index >= 0)
        out->v[cfg->pods_index] = 1;
    for (size_t r = 0; r < cfg->n; r++)
        out->has |= UINT32_C(1) << r;
    return 0;
}

int res_target_allocatable(const trellis_host *h, const res_config *cfg, const trellis_object *t,
                           res_amounts *out, char *err, size_t errlen)
{
    const trellis_value *map = h->object_get(t, cfg->allocatable_field);
    char path[300];
    int rc;

    memset(out, 0, sizeof(*out) + cfg->n * sizeof(*out->v));
    out->n = (uint32_t)cfg->n;
    rc = values_expect(h, map, TRELLIS_VALUE_MAP, "a map of quantities", cfg->allocatable_field,
                       err, errlen);
    if (rc <= 0)
        return rc;
    /* Looked up by name rather than walked: a target declares many
     * resources this profile does not count, and "pods" is read here. */
    for (size_t i = 0; i < cfg->n; i++) {
        const trellis_value *v = h->value_get(map, cfg->names[i]);

        if (!v || h->value_type(v) == TRELLIS_VALUE_NULL)
            continue;
        values_member_path(path, sizeof(path), cfg->allocatable_field, cfg->names[i], ".");
        if (res_value_quantity(h, v, cfg->unit[i], path, &out->v[i], err, errlen) < 0)
            return -1;
        out->has |= UINT32_C(1) << i;
    }
    return 0;
}

/* res_workload_requests or res_target_allocatable. */
typedef int (*read_fn)(const trellis_host *h, const res_config *cfg, const trellis_object *o,
                       res_amounts *out, char *err, size_t errlen);

static int prepare(const trellis_host *h, trellis_plugin *self, const trellis_object *obj,
                   read_fn reader, void **data, char *err, size_t errlen)
{
    const res_config *cfg = h->get_private(self);
    res_amounts *a = malloc(sizeof(*a) + cfg->n * sizeof(*a->v));

    *data = NULL;
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (reader(h, cfg, obj, a, err, errlen) < 0) {
        free(a);
        return -1;
    }
    *data = a;
    return 0;
}

int res_prepare_workload(const trellis_host *h, trellis_plugin *self, const trellis_object *obj,
                         void **data, char *err, size_t errlen)
{
    return prepare(h, self, obj, res_workload_requests, data, err, errlen);
}

int res_prepare_target(const trellis_host *h, trellis_plugin *self, const trellis_object *obj,
                       void **data, char *err, size_t errlen)
{
    return prepare(h, self, obj, res_target_allocatable, data, err, errlen);
}

int res_equivalent(const trellis_host *h, const trellis_plugin *self, const trellis_object *a,
                   const trellis_object *b)
{
    const res_amounts *x = h->object_data(self, a), *y = h->object_data(self, b);

    if (!x || !y)
        return x == y;
    return x->has == y->has && x->n == y->n && memcmp(x->v, y->v, x->n * sizeof(*x->v)) == 0;
}

void res_release(trellis_plugin *self, void *data)
{
    free(data);
}

/* A workload whose requests could not be read still takes a pod slot. */
void res_counter_amounts(const trellis_host *h, trellis_plugin *self,
                         const trellis_object *workload, int64_t *out)
{
    const res_config *cfg = h->get_private(self);
    const res_amounts *req = h->object_data(self, workload);

    for (size_t i = 0; i < cfg->n; i++)
        out[i] = req ? req->v[i] : 0;
    if (cfg->pods_index >= 0)
        out[cfg->pods_index] = 1;
}

void res_allocatable(const trellis_host *h, trellis_plugin *self, const trellis_object *target,
                     int64_t *allocatable)
{
    const res_config *cfg = h->get_private(self);
    const res_amounts *alloc = h->object_data(self, target);

    for (size_t i = 0; alloc && i < cfg->n; i++)
        if (res_has(alloc, i))
            allocatable[i] = alloc->v[i];
}

int res_name_counters(const trellis_host *h, trellis_plugin *self, trellis_allocated_fn fn,
                      char *err, size_t errlen)
{
    const res_config *cfg = h->get_private(self);
    trellis_unit units[RES_MAX];

    if (!TRELLIS_HOST_HAS(h, name_counters))
        return 0;
    /* the module's units as the SDK names them */
    for (size_t i = 0; i < cfg->n; i++)
        units[i] = cfg->unit[i] == RES_UNIT_MILLI   ? TRELLIS_UNIT_MILLI
                   : cfg->unit[i] == RES_UNIT_BYTES ? TRELLIS_UNIT_BYTES
                                                    : TRELLIS_UNIT_COUNT;
    if (h->name_counters(self, cfg->names, units, fn) < 0) {
        snprintf(err, errlen, "cannot name the counters");
        return -1;
    }
    return 0;
}

int res_plugin_init(const trellis_host *h, trellis_plugin *self, const trellis_args *args,
                    const char *list_key, trellis_prepare_fn prepare_workload,
                    trellis_prepare_fn prepare_target, trellis_amounts_fn amounts, char *err,
                    size_t errlen)
{
    res_config *cfg = malloc(sizeof(*cfg));

    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (res_config_read(h, args, list_key, cfg, err, errlen) < 0) {
        free(cfg);
        return -1;
    }
    h->set_private(self, cfg, free);

    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, res_release) < 0 ||
        h->declare_counters(self, (int)cfg->n, amounts) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

void res_format(int64_t v, res_unit unit, char *buf, size_t len)
{
    static const char *const binary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    static const char *const decimal[] = {"", "k", "M", "G", "T", "P", "E"};

    if (unit == RES_UNIT_MILLI) {
        if (v % 1000 == 0)
            snprintf(buf, len, "%lld", (long long)(v / 1000));
        else
            snprintf(buf, len, "%lldm", (long long)v);
        return;
    }
    if (unit == RES_UNIT_BYTES && v > 0) {
        for (int k = 6; k >= 1; k--) {
            int64_t m = INT64_C(1) << (10 * k);

            if (v % m == 0) {
                snprintf(buf, len, "%lld%s", (long long)(v / m), binary[k]);
                return;
            }
        }
        for (int k = 6; k >= 1; k--) {
            int64_t m = 1;

            for (int j = 0; j < k; j++)
                m *= 1000;
            if (v % m == 0) {
                snprintf(buf, len, "%lld%s", (long long)(v / m), decimal[k]);
                return;
            }
        }
    }
    snprintf(buf, len, "%lld", (long long)v);
}

/* 2^63 - 1, ParseQuantity's cap of a binary-suffixed quantity */
static const char int64_max_digits[] = "9223372036854775807";

int res_exact_parse(const char *text, res_exact *out)
{
    scanned q;
    int rc = scan(text, &q);
    if (rc != RES_OK)
        return rc;
    memset(out, 0, sizeof *out);
    if (q.nd == 0)
        return RES_OK; /* zero, whatever its sign */
    if (q.exp10 > MAX_EXPONENT)
        return RES_ERANGE;
    for (int i = 0; i < q.exp2; i++)
        double_digits(q.dig, &q.nd);
    /* round the magnitude up to the nano: keep the digits of places
     * 10^-9 and above (keep may be none or fewer than 1) */
    long keep = (long)q.nd + q.exp10 + 9;
    if (keep < (long)q.nd) {
        if (keep <= 0) { /* below a nano: one nano */
            q.dig[0] = 1;
            q.nd = 1;
            q.exp10 = -9;
        } else {
            int up = 0;
            for (size_t i = (size_t)keep; i < q.nd; i++)
                up |= q.dig[i] != 0;
            q.exp10 += (long)q.nd - keep;
            q.nd = (size_t)keep;
            for (size_t i = q.nd; up && i-- > 0;) { /* add one at the last place */
                up = q.dig[i] == 9;
                q.dig[i] = (unsigned char)(up ? 0 : q.dig[i] + 1);
            }
            if (up) { /* 99.9 became 100.0 */
                memmove(q.dig + 1, q.dig, q.nd);
                q.dig[0] = 1;
                q.nd++;
            }
        }
    }
    while (q.nd > 1 && q.dig[q.nd - 1] == 0) { /* no trailing zero */
        q.nd--;
        q.exp10++;
    }
    long point = (long)q.nd + q.exp10; /* places before the decimal point */
    if (q.exp2 > 0) {
        /* the magnitude compared with 2^63 - 1 (19 places) */
        int above = point > 19;
        for (size_t i = 0; point == 19 && !above && i < 19; i++) {
            int d = i < q.nd ? q.dig[i] : 0, m = int64_max_digits[i] - '0';
            if (d != m) {
                above = d > m;
                break;
            }
            if (i == 18 && q.nd > 19)
                above = 1;
        }
        if (above) {
            for (size_t i = 0; i < 19; i++)
                q.dig[i] = (unsigned char)(int64_max_digits[i] - '0');
            q.nd = 19;
            point = 19;
        }
    }
    if (q.nd > RES_EXACT_DIGITS)
        return RES_ERANGE;
    out->sign = q.negative ? -1 : 1;
    out->point = (int16_t)point;
    out->nd = (uint8_t)q.nd;
    memcpy(out->dig, q.dig, q.nd);
    return RES_OK;
}

int res_exact_cmp(const res_exact *a, const res_exact *b)
{
    if (a->sign != b->sign)
        return a->sign < b->sign ? -1 : 1;
    if (a->sign == 0)
        return 0;
    int mag = 0; /* the magnitudes' order */
    if (a->point != b->point) {
        mag = a->point < b->point ? -1 : 1;
    } else {
        size_t n = a->nd > b->nd ? a->nd : b->nd;
        for (size_t i = 0; i < n && !mag; i++) {
            int x = i < a->nd ? a->dig[i] : 0, y = i < b->nd ? b->dig[i] : 0;
            mag = x < y ? -1 : x > y;
        }
    }
    return a->sign < 0 ? -mag : mag;
}

double res_exact_approx(const res_exact *q)
{
    if (q->sign == 0)
        return 0;
    char text[RES_EXACT_DIGITS + 24];
    size_t n = 0;
    text[n++] = q->sign < 0 ? '-' : '+';
    text[n++] = '.';
    for (size_t i = 0; i < q->nd; i++)
        text[n++] = (char)('0' + q->dig[i]);
    snprintf(text + n, sizeof text - n, "e%d", (int)q->point);
    return strtod(text, NULL);
}
