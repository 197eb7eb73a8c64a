/* option.c - the one table of the options the library's messages name
 * (mdsd/option.h): each option's C name (the marker in a message), the mdsd
 * command line's flag and the Python package's keyword. The front ends phrase
 * library messages from it (mdsd_option_words), so that no library string
 * names a flag (tests/test_option.c checks the sources, and that every CLI
 * spelling is a flag of some command and every Python one a keyword). */
#include <mdsd/option.h>

#include <stdbool.h>
#include <string.h>

/* Several C names may share a flag (draft_counts of the table job and drafts of
 * the report are both --drafts), but each C name is one option. */
static const struct {
    const char *c, *cli, *python;
} options[MDSD_OPTION_LIMIT] = {
    [MDSD_OPTION_MAX_PATHS] = {"max_paths", "--max-paths", "max_paths="},
    [MDSD_OPTION_MAX_TUPLES] = {"max_tuples", "--max-tuples", "max_tuples="},
    [MDSD_OPTION_IS_TOP] = {"is_top", "--is-top", "is_top="},
    [MDSD_OPTION_TRIALS] = {"trials", "--trials", "trials="},
    [MDSD_OPTION_SIMULATE] = {"simulate", "--simulate", "simulate=True"},
    [MDSD_OPTION_METHOD] = {"method", "--method", "method="},
    [MDSD_OPTION_FORCE] = {"force", "--force", "force=True"},
    /* C: mdsd_softmax's argument; Python: the same function */
    [MDSD_OPTION_LOGITS] = {"logits", "--logits", "mdsd.softmax(logits)"},
    /* a custom scheme's joint law: the CLI reads it from a file */
    [MDSD_OPTION_JOINT] = {"joint", "--custom", "joint="},
    [MDSD_OPTION_TEMPERATURES] = {"temperatures", "--temperatures", "temperatures="},
    [MDSD_OPTION_DRAFT_COUNTS] = {"draft_counts", "--drafts", "draft_counts="},
    [MDSD_OPTION_DRAFTS] = {"drafts", "--drafts", "drafts="},
    [MDSD_OPTION_SCHEMES] = {"schemes", "--schemes", "schemes="},
    [MDSD_OPTION_METHODS] = {"methods", "--methods", "methods="},
    [MDSD_OPTION_DUMPS] = {"dumps", "--dumps", "dumps="},
    [MDSD_OPTION_DUMP] = {"dump", "--dump", "dump="},
    [MDSD_OPTION_OUTPUT] = {"output", "-o", "output="},
    [MDSD_OPTION_RESUME] = {"resume", "--resume", "resume=True"},
    [MDSD_OPTION_DISCARD_PARTIAL] = {"discard_partial", "--discard-partial", "discard_partial=True"},
    [MDSD_OPTION_VERIFIERS] = {"verifiers", "--verifiers", "verifiers="},
    [MDSD_OPTION_VERIFIER] = {"verifier", "--verifier", "verifier="},
    [MDSD_OPTION_SEQUENCES] = {"sequences", "--sequences", "sequences="},
    [MDSD_OPTION_DEPTHS] = {"depths", "--depth", "depths="},
    /* the Markov route's one depth: mdsd.block takes it as depths= too */
    [MDSD_OPTION_DEPTH] = {"depth", "--depth", "depths="},
    [MDSD_OPTION_TREE] = {"tree", "--tree", "tree="},
    [MDSD_OPTION_SCHEME] = {"scheme", "--scheme", "scheme="},
    [MDSD_OPTION_COSTS] = {"costs", "--cost", "costs="},
    [MDSD_OPTION_ENGINE_METRICS] = {"engine_metrics", "--engine-metrics", "engine_metrics="},
    [MDSD_OPTION_SHARD] = {"shard", "--shard", "shard="},
    [MDSD_OPTION_MARKDOWN] = {"markdown", "--markdown", "markdown="},
    [MDSD_OPTION_LATEX] = {"latex", "--latex", "latex="},
    [MDSD_OPTION_PER_POSITION] = {"per_position", "--per-position", "per_position="},
    /* mdsd_table_opts.row_begin .. row_end */
    [MDSD_OPTION_ROWS] = {"row_begin", "--positions", "rows="},
    [MDSD_OPTION_DRAFT_MODELS] = {"draft_models", "--draft-model", "draft_models="},
    [MDSD_OPTION_TOP_K] = {"top_k", "--top-k", "top_k="},
    [MDSD_OPTION_TOP_P] = {"top_p", "--top-p", "top_p="},
    [MDSD_OPTION_LABELS] = {"labels", "--label", "labels="},
    [MDSD_OPTION_PAIRED] = {"paired", "--paired", "paired="},
    [MDSD_OPTION_LAYOUT] = {"layout", "--layout", "layout="},
    [MDSD_OPTION_STANDALONE] = {"standalone", "--standalone", "standalone=True"},
    [MDSD_OPTION_CSV] = {"csv", "--csv", "csv=True"},
    [MDSD_OPTION_MARKOV] = {"markov", "--markov", "markov="},
    /* mdsd_block_markov_live's argument */
    [MDSD_OPTION_HORIZON] = {"horizon", "--live", "live="},
    [MDSD_OPTION_PAPER_SIZE] = {"paper_size", "--size", "size="},
    [MDSD_OPTION_LEGEND] = {"legend", "--legend", "legend="},
    [MDSD_OPTION_N] = {"n", "--n", "n="},
    [MDSD_OPTION_TEMPERATURE] = {"temperature", "--temperature", "temperature="},
    [MDSD_OPTION_KIND] = {"kind", "--kind", "kind="},
    [MDSD_OPTION_TERMINAL] = {"terminal", "--terminal", "terminal="},
    [MDSD_OPTION_SCRIPTS] = {"scripts", "--scripts", "scripts="},
    [MDSD_OPTION_COUNT] = {"count", "--count", "count="},
    [MDSD_OPTION_CHECKPOINT_SECONDS] = {"checkpoint_seconds", "--checkpoint-seconds", "checkpoint_seconds="},
};

const char *mdsd_option_name(int option, int spelling)
{
    if (option <= MDSD_OPTION_NONE || option >= MDSD_OPTION_LIMIT)
        return NULL;
    switch (spelling) {
    case MDSD_SPELL_C: return options[option].c;
    case MDSD_SPELL_CLI: return options[option].cli;
    case MDSD_SPELL_PYTHON: return options[option].python;
    default: return NULL;
    }
}

static int lookup(const char *name, size_t len)
{
    for (int k = MDSD_OPTION_NONE + 1; k < MDSD_OPTION_LIMIT; k++)
        if (options[k].c && strlen(options[k].c) == len && !memcmp(options[k].c, name, len))
            return k;
    return MDSD_OPTION_NONE;
}

mdsd_option mdsd_option_lookup(const char *name)
{
    return name ? (mdsd_option)lookup(name, strlen(name)) : MDSD_OPTION_NONE;
}

/* Appends n bytes of s to out[0..size) at *len (what fits; *len counts all). */
static void put(char *out, size_t size, size_t *len, const char *s, size_t n)
{
    if (*len + 1 < size) {
        size_t room = size - 1 - *len;
        memcpy(out + *len, s, n < room ? n : room);
    }
    *len += n;
}

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

size_t mdsd_option_words(const char *msg, int spelling, char *out, size_t size)
{
    size_t len = 0;
    if (!msg)
        msg = "";
    for (const char *s = msg; *s;) {
        const char *open = strchr(s, '`');
        const char *close = open ? strchr(open + 1, '`') : NULL;
        if (!close) {
            put(out, size, &len, s, strlen(s));
            break;
        }
        /* `NAME` or `NAME VALUE`, NAME an option's C name */
        const char *name = open + 1, *e = name;
        while (e < close && name_char(*e))
            e++;
        int k = (e > name && (e == close || *e == ' ')) ? lookup(name, (size_t)(e - name)) : MDSD_OPTION_NONE;
        const char *word = k && spelling != MDSD_SPELL_C ? mdsd_option_name(k, spelling) : NULL;
        if (!word) {
            /* not a marker (or the C spelling): the quoted text stays as it is */
            put(out, size, &len, s, (size_t)(close + 1 - s));
            s = close + 1;
            continue;
        }
        put(out, size, &len, s, (size_t)(open - s));
        size_t wl = strlen(word);
        /* Python: "`max_paths`: ..." labels what follows, "max_paths: ...", not
         * "max_paths=: ..." */
        if (spelling == MDSD_SPELL_PYTHON && e == close && close[1] == ':' && word[wl - 1] == '=')
            wl--;
        put(out, size, &len, word, wl);
        if (e < close) {
            const char *value = e + 1;
            /* the CLI: "--method sort"; Python: "method=sort" after an "=" */
            if (spelling != MDSD_SPELL_PYTHON || word[wl - 1] != '=')
                put(out, size, &len, " ", 1);
            put(out, size, &len, value, (size_t)(close - value));
        }
        s = close + 1;
    }
    if (size)
        out[len < size ? len : size - 1] = '\0';
    return len;
}
