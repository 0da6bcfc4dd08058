/*
 * fuzz_kubesched.c - a KubeSchedulerConfiguration translated into a
 * trellis config (kubesched.c), as `-c FILE` and `trellis config convert`
 * read it.
 *
 * Properties: detection and translation never crash or leak; a failed
 * translation says why, naming the file; a translated tree written as
 * libconfig text (what config convert prints) reads back, and written
 * again gives the same text, so the conversion is a file trellis loads.
 */
#include "config.h"

#include "fuzz.h"

#include <libconfig.h>

#include "kubesched.h"

/* lc as libconfig text; the caller frees it. */
static char *written(config_t *lc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        abort();
    config_write(lc, f);
    fclose(f);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    (void)kubesched_detect(text, size);
    config_t lc;
    config_init(&lc);
    char err[2048] = "", *notice = NULL;
    if (kubesched_translate("fuzz.yaml", text, size, &lc, &notice, err, sizeof err) < 0) {
        FUZZ_CHECK(strncmp(err, "fuzz.yaml", 9) == 0, "an error without the file: '%s'", err);
        FUZZ_CHECK(notice == NULL, "a notice after an error");
    } else {
        char *out = written(&lc);
        config_t back;
        config_init(&back);
        FUZZ_CHECK(config_read_string(&back, out), "the conversion does not read back: %s:\n%s",
                   config_error_text(&back), out);
        char *again = written(&back);
        FUZZ_CHECK(strcmp(out, again) == 0, "written twice differs:\n%s\n---\n%s", out, again);
        free(again);
        free(out);
        config_destroy(&back);
    }
    free(notice);
    config_destroy(&lc);
    free(text);
    return 0;
}
