/*
 * fortran_types.h - what the checks of fortran_args.c need to know about
 * Fortran types: which actual arguments suit which IDL types, integer
 * elements of any kind, and the wording of the error messages. Internal to
 * libninf_fortran.
 */
#ifndef NINF_FORTRAN_TYPES_H
#define NINF_FORTRAN_TYPES_H

#include <ISO_Fortran_binding.h>
#include <stddef.h>

#include "client/ninf_binding.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How an actual argument meets an IDL type. */
typedef enum {
  FORTRAN_MISMATCH = 0, /* refused */
  FORTRAN_DIRECT = 1,   /* same representation: the caller's memory is used */
  FORTRAN_CONVERT = 2   /* an integer of another kind: converted element by element */
} fortran_match;

/* Whether an actual of CFI type `cfi` (elem_len bytes) suits an IDL type;
 * `is_array` selects the rules for arrays (and pointer parameters) or IN
 * scalars. */
fortran_match fortran_match_type(int idl_type, int is_array, CFI_type_t cfi, size_t elem_len);

/* Bytes per element of an IDL integer type (char 1, short 2, int 4, long 8). */
size_t fortran_idl_int_size(int idl_type);

/* Integer elements of 1, 2, 4 or 8 bytes. */
long long fortran_get_int(const void *p, size_t size);
void fortran_put_int(void *p, size_t size, long long v);
/* Whether v fits an integer of `size` bytes; 1-byte values may be signed or
 * unsigned, as C's char is either. */
int fortran_int_fits(long long v, size_t size);

/* The elements of an actual argument (1 for a scalar, CHARACTER lengths
 * included), or SIZE_MAX for an assumed-size array whose extent is unknown. */
size_t fortran_element_count(const CFI_cdesc_t *d, int count_characters);

/* "a rank-2 REAL(8) array", "an INTEGER(4) scalar", ...: an actual argument
 * and an IDL parameter, in the words of the error messages. */
void fortran_describe_actual(const CFI_cdesc_t *d, char *out, size_t outlen);
void fortran_describe_param(const ninf_param_info *p, char *out, size_t outlen);

/* The IDL name of a type ("int", "double", ...). */
const char *fortran_idl_type_name(int idl_type);

#ifdef __cplusplus
}
#endif

#endif /* NINF_FORTRAN_TYPES_H */
