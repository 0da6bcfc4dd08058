/*
 * kubesched.h - kube-scheduler's own configuration file as a trellis
 * config.
 *
 * A YAML (or JSON) `KubeSchedulerConfiguration` of
 * `kubescheduler.config.k8s.io/v1` is translated into the libconfig tree
 * that a trellis config file would hold: one profile of Pods on Nodes per
 * kube profile, kube's default plugins merged with the file's
 * enabled/disabled sets and multiPoint as kube-scheduler merges and
 * expands them, its score weights, each pluginConfig's args handed to the
 * trellis plugin that reproduces the kube plugin, the extenders as
 * http-extender entries. cfg.c then loads that tree as it loads a file, so
 * nothing is validated twice, and `trellis config convert` writes it out.
 * Every setting made from a YAML node carries that node's line; every key
 * trellis has no equivalent for is refused with its file, line and what
 * to do instead (doc/kube.md lists them).
 */
#ifndef TRELLIS_KUBESCHED_H
#define TRELLIS_KUBESCHED_H

#include <stddef.h>

#include <libconfig.h>

/* Whether text looks like a KubeSchedulerConfiguration: its root is a
 * YAML or JSON mapping whose kind is KubeSchedulerConfiguration or whose
 * apiVersion is in kubescheduler.config.k8s.io. A libconfig file never
 * is. 1 or 0. Ownership of text is retained by the caller. */
int kubesched_detect(const char *text, size_t len);

/* Translate text (read from file, named in messages) into lc, which the
 * caller has initialised and which holds nothing yet. 0, or -1 with err
 * "file:line: what, what to do" (lc may then hold part of the tree; the
 * caller destroys it). *notice gets a malloc'd sentence for the operator
 * (the kube default plugins left out because trellis has no volumes), or
 * NULL; ownership of it transfers to the caller. Ownership of text, file
 * and lc is retained by the caller; settings of lc point at no memory of
 * this module. */
int kubesched_translate(const char *file, const char *text, size_t len, config_t *lc, char **notice,
                        char *err, size_t errlen);

#endif
