/*
 * kubeconfig.h - what a kubeconfig file says about reaching an API
 * server, read as kubectl reads it: the context (current-context unless
 * one is named), its cluster's server, certificate-authority(-data) and
 * insecure-skip-tls-verify, its user's client-certificate(-data),
 * client-key(-data), token or tokenFile. Relative file names are relative
 * to the kubeconfig's directory. Exec and auth-provider plugins are not
 * run: a user that needs one is an error saying so.
 */
#ifndef TRELLIS_KUBECONFIG_H
#define TRELLIS_KUBECONFIG_H

#include <stddef.h>

typedef struct kubeconfig {
    char *context, *server;               /* "https://10.0.0.1:6443", no trailing slash */
    char *ca_file, *cert_file, *key_file; /* resolved paths, or NULL */
    char *ca_pem, *cert_pem, *key_pem;    /* decoded *-data, or NULL */
    char *token;                          /* a bearer token (tokenFile read), or NULL */
    int insecure;
} kubeconfig;

/* Parse the kubeconfig text of file where (for messages; dir resolves
 * relative names). context NULL: its current-context. 0, or -1 with err
 * naming the file, the line where there is one, and what is wrong. */
int kubeconfig_parse(const char *where, const char *dir, const char *text, size_t len,
                     const char *context, kubeconfig *kc, char *err, size_t errlen);
/* Read and parse path; NULL: $KUBECONFIG (its first file), then
 * ~/.kube/config. */
int kubeconfig_load(const char *path, const char *context, kubeconfig *kc, char *err,
                    size_t errlen);
void kubeconfig_free(kubeconfig *kc);

#endif
