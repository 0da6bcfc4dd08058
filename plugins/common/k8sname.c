/*
 * k8sname.c - see k8sname.h.
 */
#include "k8sname.h"

#include <stddef.h>
#include <string.h>

static int lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int alnum(char c)
{
    return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* A DNS label of n characters at s (n may be 0: not one), of any length
 * (a part of a subdomain may be longer than a label). */
static const char *label_n(const char *s, size_t n)
{
    if (n == 0)
        return "must not be empty";
    for (size_t i = 0; i < n; i++)
        if (!lower_alnum(s[i]) && s[i] != '-')
            return "must consist of lowercase letters, digits and '-'";
    if (s[0] == '-' || s[n - 1] == '-')
        return "must start and end with a lowercase letter or digit";
    return NULL;
}

const char *k8s_dns_label(const char *s)
{
    size_t n = strlen(s);
    return n > 63 ? "must be no more than 63 characters" : label_n(s, n);
}

/* A subdomain of n characters at s. */
static const char *subdomain_n(const char *s, size_t n)
{
    if (n == 0)
        return "must not be empty";
    if (n > 253)
        return "must be no more than 253 characters";
    for (size_t b = 0; b <= n;) {
        size_t e = b;
        while (e < n && s[e] != '.')
            e++;
        const char *why = label_n(s + b, e - b);
        if (why)
            return e - b == 0 ? "must not have an empty part between '.'s"
                              : "must consist of lowercase letters, digits, '-' and '.', each "
                                "part starting and ending with a letter or digit";
        b = e + 1;
    }
    return NULL;
}

const char *k8s_dns_subdomain(const char *s)
{
    return subdomain_n(s, strlen(s));
}

const char *k8s_name_prefix(const char *s)
{
    /* apimachinery's maskTrailingDash: a trailing '-' and the character
     * before it read as "a" */
    char buf[256];
    size_t n = strlen(s);
    if (n == 0)
        return "must not be empty";
    if (n > 254 || (n == 254 && s[n - 1] != '-'))
        return "must be no more than 253 characters";
    memcpy(buf, s, n + 1);
    if (n > 1 && buf[n - 1] == '-') {
        buf[n - 2] = 'a';
        buf[--n] = '\0';
    }
    return subdomain_n(buf, n);
}

/* The name part of a key, n characters. */
static const char *name_n(const char *s, size_t n)
{
    if (n == 0)
        return "must not be empty";
    if (n > 63)
        return "must be no more than 63 characters";
    for (size_t i = 0; i < n; i++)
        if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return "must consist of letters, digits, '-', '_' and '.'";
    if (!alnum(s[0]) || !alnum(s[n - 1]))
        return "must start and end with a letter or digit";
    return NULL;
}

const char *k8s_qualified_name(const char *s)
{
    const char *slash = strchr(s, '/');
    if (!slash)
        return name_n(s, strlen(s));
    if (strchr(slash + 1, '/'))
        return "must have at most one '/' (a prefix, then a name)";
    if (subdomain_n(s, (size_t)(slash - s)))
        return "must have a prefix before '/' that is a DNS subdomain (lowercase letters, "
               "digits, '-' and '.')";
    return name_n(slash + 1, strlen(slash + 1));
}

const char *k8s_annotation_key(const char *s)
{
    char low[320];
    size_t n = strlen(s);
    if (n >= sizeof low)
        return "must be no more than 317 characters ([prefix/]name)";
    for (size_t i = 0; i <= n; i++)
        low[i] = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
    return k8s_qualified_name(low);
}

const char *k8s_label_value(const char *s)
{
    return *s ? name_n(s, strlen(s)) : NULL;
}
