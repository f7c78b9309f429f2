/* One JSON value as one line of text: what the JSON log and the stratum
 * protocol both write. */
#ifndef LODE_BASE_JSON_LINE_H
#define LODE_BASE_JSON_LINE_H

#include <jansson.h>

/* obj as compact JSON plus "\n" (malloc'd), or NULL (obj NULL, or no
 * memory). Takes obj's reference. */
char *lode_json_line(json_t *obj);

#endif
