#include "core/base/json_line.h"

#include <stdlib.h>
#include <string.h>

char *lode_json_line(json_t *obj)
{
    if (obj == NULL)
        return NULL;
    char *text = json_dumps(obj, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(obj);
    if (text == NULL)
        return NULL;
    size_t n = strlen(text);
    char *line = realloc(text, n + 2);
    if (line == NULL) {
        free(text);
        return NULL;
    }
    line[n] = '\n';
    line[n + 1] = '\0';
    return line;
}
