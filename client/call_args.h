/*
 * Collecting a Ninf_call argument list. Reading C varargs must happen in C
 * (C++ cannot name `float _Complex` portably), so this small C layer turns a
 * va_list into an array of tagged values, guided by the interface: one kind
 * per IDL parameter. Internal to libninf.
 */
#ifndef NINF_CALL_ARGS_H
#define NINF_CALL_ARGS_H

#include <stdarg.h>

#include "ninf_binding.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  NINF_ARGKIND_INT = 0,      /* char, short, int: promoted to int */
  NINF_ARGKIND_LONG = 1,     /* long */
  NINF_ARGKIND_DOUBLE = 2,   /* float (promoted to double), double */
  NINF_ARGKIND_SCOMPLEX = 3, /* float _Complex: not promoted */
  NINF_ARGKIND_DCOMPLEX = 4, /* double _Complex */
  NINF_ARGKIND_STRING = 5,   /* const char * */
  NINF_ARGKIND_POINTER = 6   /* arrays and OUT scalars */
} ninf_argkind;

/* The same record a language binding fills in (ninf_binding.h). */
typedef ninf_binding_value ninf_argvalue;

/* Reads one value per entry of `kinds` from *ap into `out`. */
void ninf__collect_args(const int *kinds, int count, va_list *ap, ninf_argvalue *out);

#ifdef __cplusplus
}
#endif

#endif
