/* The options' lookup and application: the command line (main.c) and
 * config files (config.c) both come through cli_apply_option, which
 * applies an option with its row's setter (option_table.c); and
 * getopt_long's tables and --help from the same rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli/option_parse.h"
#include "core/cli/options.h"

void cli_options_init(cli_options *o, int command)
{
    *o = (cli_options){.command = command};
    o->tf.results = "results.json.txt";
    o->tf.ckp_dir = ".";
    o->tf.ckp_interval = 60;
    o->tf.progress_interval = 10;
    o->tf.stop_after_factor = 1;
    o->tf.add_delay = 600;
    o->tf.work_pref = 12;
    o->tf.days_of_work = 1;
    o->cpu_priority = -1;
}

const char *cli_keep(cli_options *o, const char *s)
{
    char **grown = realloc(o->owned, (o->owned_count + 1) * sizeof *grown);
    if (grown == NULL)
        return NULL;
    o->owned = grown;
    char *copy = strdup(s);
    if (copy != NULL)
        o->owned[o->owned_count++] = copy;
    return copy;
}

static bool applies(const cli_option *opt, int command)
{
    return (opt->commands & (1u << command)) != 0;
}

const cli_option *cli_find_option(int command, const char *name)
{
    for (const cli_option *opt = cli_option_table; opt->name != NULL; opt++)
        if (applies(opt, command) && strcmp(opt->name, name) == 0)
            return opt;
    return NULL;
}

void cli_getopt_tables(int command, struct option *longs, size_t cap, char *shorts, size_t shorts_cap)
{
    size_t n = 0, s = 0;
    if (shorts_cap > 1)
        shorts[s++] = ':'; /* a missing value is ':', not '?' */
    for (const cli_option *opt = cli_option_table; opt->name != NULL; opt++) {
        if (!applies(opt, command))
            continue;
        if (n + 1 < cap)
            longs[n++] = (struct option){opt->name, opt->arg ? required_argument : no_argument, NULL,
                                         256 + (int)(opt - cli_option_table)};
        if (opt->short_name && s + 3 < shorts_cap) {
            shorts[s++] = opt->short_name;
            if (opt->arg)
                shorts[s++] = ':';
        }
    }
    if (cap > 0)
        longs[n] = (struct option){0};
    if (shorts_cap > 0)
        shorts[s] = '\0';
}

const cli_option *cli_option_of(int command, int c)
{
    size_t count = 0;
    while (cli_option_table[count].name != NULL)
        count++;
    if (c >= 256)
        return (size_t)(c - 256) < count ? &cli_option_table[c - 256] : NULL;
    for (const cli_option *opt = cli_option_table; opt->name != NULL; opt++)
        if (applies(opt, command) && opt->short_name != 0 && opt->short_name == c)
            return opt;
    return NULL;
}

void cli_print_options(FILE *out, int command)
{
    enum { COLUMN = 23 };
    for (const cli_option *opt = cli_option_table; opt->name != NULL; opt++) {
        bool algo = strcmp(opt->name, "algo") == 0;
        if (!applies(opt, command) || (opt->help == NULL && !algo))
            continue;
        char left[64];
        int n = snprintf(left, sizeof left, "  %c%c%c --%s%s%s", opt->short_name ? '-' : ' ',
                         opt->short_name ? opt->short_name : ' ', opt->short_name ? ',' : ' ', opt->name,
                         opt->arg ? " " : "", opt->arg ? opt->arg : "");
        fprintf(out, "%s%*s", left, n < COLUMN - 1 ? COLUMN - n : 2, "");
        const char *help = algo ? lode_algo_names() : opt->help;
        for (const char *line = help; *line;) {
            size_t len = strcspn(line, "\n");
            fprintf(out, "%s%.*s\n", line == help ? "" : "                       ", (int)len, line);
            line += len + (line[len] == '\n');
        }
    }
}

int cli_apply_option(cli_options *o, const char *name, const char *v, char *err, size_t err_len)
{
    const cli_option *opt = cli_find_option(o->command, name);
    /* Another miner's spelling: apply the option it stands for. */
    if (opt != NULL && opt->same_as != NULL)
        opt = cli_find_option(o->command, name = opt->same_as);
    if (opt == NULL || opt->set == NULL)
        return lode_fail(err, err_len, "unknown option '%s'", name);
    return opt->set(o, opt, v, err, err_len);
}

void cli_options_free(cli_options *o)
{
    for (size_t i = 0; i < o->owned_count; i++)
        free(o->owned[i]);
    free(o->owned);
    o->owned = NULL;
    o->owned_count = 0;
}
