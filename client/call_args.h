/*
 * Collecting a Ninf_call argument list. Reading C varargs must happen in C
 * (C++ cannot name `float _Complex` portably), so this small C layer turns a
 * va_list into an array of tagged values, guided by the interface: one kind
 * per IDL parameter (ninf_argkind, from the type table in ninf_types.h).
 * Internal to libninf.
 */
#ifndef NINF_CALL_ARGS_H
#define NINF_CALL_ARGS_H

#include <stdarg.h>

#include "client/ninf_binding.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The same record a language binding fills in (ninf_binding.h). */
typedef ninf_binding_value ninf_argvalue;

/* Reads one value per entry of `kinds` from *ap into `out`. */
void ninf__collect_args(const ninf_argkind *kinds, int count, va_list *ap, ninf_argvalue *out);

#ifdef __cplusplus
}
#endif

#endif
