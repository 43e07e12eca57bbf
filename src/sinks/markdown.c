/* The Markdown report: a heading, the run's environment, the table. It keeps the rows and
 * redraws the whole file at every flush, so PATH.partial always holds a complete report of the
 * finished rows; a write-through target (FIFO, device) is drawn once, at end. */
#include <unistd.h>

#include "sinks/sink.h"

static void draw(sb_sink *s, const sb_env *env)
{
    FILE *f = s->out.f;
    const sb_results *res = s->state;
    if (!s->out.direct && !s->out.to_stdout) {
        fflush(f);
        rewind(f);
        if (ftruncate(fileno(f), 0) != 0)
            return; /* ferror is not set: the rewrite below overwrites in place */
    }
    fprintf(f, "### syncbench on %s\n\n", env->gpu);
    fprintf(f, "driver %s, CUDA %s, host %s, run `%s`\n\n", env->driver, env->cuda_runtime,
            env->host, env->run_id);
    sb_table_print(f, res, 1);
}

static int markdown_flush(sb_sink *s, const sb_env *env)
{
    if (!s->out.direct && !s->out.to_stdout)
        draw(s, env);
    return 0;
}

static int markdown_end(sb_sink *s, const sb_env *env)
{
    draw(s, env);
    return 0;
}

const sb_sink_ops sb_markdown_sink = {
    .name = "markdown",
    SB_SINK_KEEPS_ROWS,
    .flush = markdown_flush,
    .end = markdown_end,
};
