/* A record line held to the record table as its writer must keep to it (model.h): the writers of
 * inject/ print their lines by hand, allocation-free, and the tests check what they print with
 * this (tests/unit/test_watch.c, `syncbench __record-schema --check`). */
#include "model/model.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "record/schema.h"

static int is_type(json_t *v, sb_rec_ftype type)
{
    return type == SB_FT_INT   ? json_is_integer(v)
           : type == SB_FT_STR ? json_is_string(v)
                               : json_is_array(v);
}

static int fields_conform(const sb_rec_def *def, json_t *o, char *why, size_t whylen)
{
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v)
    {
        if (!strcmp(key, "t"))
            continue;
        const sb_rec_field *f = sb_rec_field_find(def, key);
        if (!f) {
            snprintf(why, whylen, "\"%s\" has no field \"%s\" in the record table", def->t, key);
            return 0;
        }
        if (!is_type(v, f->type)) {
            snprintf(why, whylen, "\"%s\"'s \"%s\" is not a JSON %s", def->t, key,
                     sb_rec_ftype_name(f->type));
            return 0;
        }
    }
    for (size_t i = 0; i < def->nfields; i++)
        if (def->fields[i].required && !json_object_get(o, def->fields[i].name)) {
            snprintf(why, whylen, "\"%s\" without its required \"%s\"", def->t,
                     def->fields[i].name);
            return 0;
        }
    return 1;
}

int sb_audit_record_conforms(const char *line, size_t len, char *why, size_t whylen)
{
    json_error_t err;
    json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err);
    int ok = 0;
    if (!json_is_object(o))
        snprintf(why, whylen, "not a JSON object: %s", o ? "another value" : err.text);
    else if (!json_is_string(json_object_get(o, "t")))
        snprintf(why, whylen, "no \"t\" string");
    else {
        const char *t = json_string_value(json_object_get(o, "t"));
        const sb_rec_def *def = sb_rec_find(t);
        if (!def)
            snprintf(why, whylen, "\"t\":\"%s\" is no kind of the record table", t);
        else
            ok = fields_conform(def, o, why, whylen);
    }
    json_decref(o);
    return ok;
}
