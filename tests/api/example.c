/* example.c - a C program against the installed libmdsd (tests/test_api.c builds it
 * with `pkg-config --cflags --libs mdsd` and checks its output). */
#include <stdio.h>

#include <mdsd/mdsd.h>

int main(void)
{
    double p[3] = {0.5, 0.3, 0.2}, q[3] = {0.2, 0.3, 0.5};
    mdsd_scheme iid = {MDSD_SCHEME_IID, 2, 3, q, NULL};
    mdsd_alpha_result best;
    double rate, per_draft[2];
    if (mdsd_alpha(p, &iid, MDSD_ALPHA_AUTO, NULL, &best, NULL, NULL) ||
        mdsd_verifier_rate(MDSD_VERIFIER_RRS, p, &iid, NULL, &rate, per_draft, NULL))
        return 1;
    printf("alpha* = %.17g (%s), rrs = %.17g\n", best.alpha, mdsd_alpha_method_name(best.method),
           rate);

    /* One decoding step: drafts from the scheme, the verifier picks the next token. */
    mdsd_err err;
    mdsd_rng *rng = mdsd_rng_new(1, &err);
    mdsd_sampler *drafter = mdsd_sampler_new(&iid, &err);
    mdsd_verifier *v = mdsd_verifier_new(MDSD_VERIFIER_RRS, p, &iid, NULL, &err);
    if (!rng || !drafter || !v) {
        fprintf(stderr, "mdsd: %s\n", err.msg);
        return 1;
    }
    mdsd_token drafts[2];
    int accepted;
    mdsd_sampler_draw_drafts(drafter, rng, drafts);
    mdsd_token y = mdsd_verify(v, drafts, rng, &accepted, &err);
    printf("drafts %d %d -> token %d (draft %d)\n", drafts[0], drafts[1], y, accepted);
    mdsd_verifier_free(v);
    mdsd_sampler_free(drafter);
    mdsd_rng_free(rng);

    /* Errors carry their own code and message. */
    double bad[3] = {0.5, 0.6, 0.2};
    int rc = mdsd_alpha(bad, &iid, MDSD_ALPHA_AUTO, NULL, &best, NULL, &err);
    printf("error %d (%s): %s\n", rc, mdsd_strerror(rc), err.msg);
    return rc == MDSD_EINVAL && y >= 0 && y < 3 ? 0 : 1;
}
