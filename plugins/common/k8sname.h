/*
 * k8sname.h - the Kubernetes API server's rules for names, label keys and
 * label values (apimachinery's validation: IsDNS1123Label,
 * IsDNS1123Subdomain, IsQualifiedName, IsValidLabelValue), for plugins
 * that write objects: what the API server would refuse is refused when
 * the configuration is loaded, not when an object is written.
 *
 * Each returns NULL when s is valid, else what is wrong (static text).
 */
#ifndef TRELLIS_K8SNAME_H
#define TRELLIS_K8SNAME_H

/* A namespace: at most 63 lowercase letters, digits and '-', starting and
 * ending with a letter or digit. */
const char *k8s_dns_label(const char *s);
/* Most objects' names: at most 253 characters, DNS labels joined by '.'. */
const char *k8s_dns_subdomain(const char *s);
/* A metadata.generateName, as the API server checks one: a name, but for
 * a trailing '-' (apimachinery's maskTrailingDash). */
const char *k8s_name_prefix(const char *s);
/* A label or annotation key: [prefix/]name, the prefix a DNS subdomain,
 * the name at most 63 letters, digits, '-', '_' and '.', starting and
 * ending with a letter or digit. */
const char *k8s_qualified_name(const char *s);
/* An annotation key: a label key once lower-cased (ValidateAnnotations). */
const char *k8s_annotation_key(const char *s);
/* A label value: empty, or a name as in a key (without a prefix). */
const char *k8s_label_value(const char *s);

#endif
