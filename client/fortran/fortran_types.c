/* fortran_types.c - Fortran types against IDL types (see fortran_types.h). */
#include "client/fortran/fortran_types.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int category(CFI_type_t t) { return t < 0 ? -1 : (int)(t & CFI_type_mask); }

static int is_integer(CFI_type_t t, size_t elem_len) {
  return category(t) == CFI_type_Integer &&
         (elem_len == 1 || elem_len == 2 || elem_len == 4 || elem_len == 8);
}

size_t fortran_idl_int_size(int idl_type) {
  const ninf_type_info *info = ninf_type_info_of(idl_type);
  return info && info->cls == NINF_CLASS_INTEGER ? info->element_size : 0;
}

/* Integer IDL types take an INTEGER of any kind: the same size is used as
 * is, another is converted with a range check. char also takes CHARACTER
 * (an IN scalar of length 1; an array of any length, one byte a character). */
static fortran_match match_integer(int idl_type, int is_array, CFI_type_t cfi, size_t elem_len) {
  if (idl_type == NINF_TYPE_CHAR && cfi == CFI_type_char && (is_array || elem_len == 1))
    return FORTRAN_DIRECT;
  if (!is_integer(cfi, elem_len)) return FORTRAN_MISMATCH;
  return elem_len == fortran_idl_int_size(idl_type) ? FORTRAN_DIRECT : FORTRAN_CONVERT;
}

fortran_match fortran_match_type(int idl_type, int is_array, CFI_type_t cfi, size_t elem_len) {
  const ninf_type_info *info = ninf_type_info_of(idl_type);
  if (!info) return FORTRAN_MISMATCH;
  switch (info->cls) {
    case NINF_CLASS_INTEGER:
      return match_integer(idl_type, is_array, cfi, elem_len);
    /* Reals and complexes must have the exact kind: converting them would
     * silently change precision. */
    case NINF_CLASS_REAL:
      return category(cfi) == CFI_type_Real && elem_len == info->element_size ? FORTRAN_DIRECT
                                                                              : FORTRAN_MISMATCH;
    case NINF_CLASS_COMPLEX:
      return category(cfi) == CFI_type_Complex && elem_len == info->element_size ? FORTRAN_DIRECT
                                                                                 : FORTRAN_MISMATCH;
    case NINF_CLASS_STRING:
      return cfi == CFI_type_char && !is_array ? FORTRAN_DIRECT : FORTRAN_MISMATCH;
  }
  return FORTRAN_MISMATCH;
}

long long fortran_get_int(const void *p, size_t size) {
  int8_t i1;
  int16_t i2;
  int32_t i4;
  int64_t i8;
  switch (size) {
    case 1:
      memcpy(&i1, p, 1);
      return i1;
    case 2:
      memcpy(&i2, p, 2);
      return i2;
    case 4:
      memcpy(&i4, p, 4);
      return i4;
    default:
      memcpy(&i8, p, 8);
      return i8;
  }
}

void fortran_put_int(void *p, size_t size, long long v) {
  int8_t i1 = (int8_t)v;
  int16_t i2 = (int16_t)v;
  int32_t i4 = (int32_t)v;
  int64_t i8 = (int64_t)v;
  switch (size) {
    case 1:
      memcpy(p, &i1, 1);
      break;
    case 2:
      memcpy(p, &i2, 2);
      break;
    case 4:
      memcpy(p, &i4, 4);
      break;
    default:
      memcpy(p, &i8, 8);
      break;
  }
}

int fortran_int_fits(long long v, size_t size) {
  switch (size) {
    case 1:
      return v >= -128 && v <= 255;
    case 2:
      return v >= INT16_MIN && v <= INT16_MAX;
    case 4:
      return v >= INT32_MIN && v <= INT32_MAX;
    default:
      return 1;
  }
}

size_t fortran_element_count(const CFI_cdesc_t *d, int count_characters) {
  size_t n = 1;
  for (int r = 0; r < d->rank; r++) {
    if (d->dim[r].extent < 0) return SIZE_MAX; /* assumed-size: the last extent is -1 */
    n *= (size_t)d->dim[r].extent;
  }
  if (count_characters && d->type == CFI_type_char) n *= d->elem_len;
  return n;
}

/* "INTEGER(4)", "REAL(8)", "CHARACTER(len=5)", ... */
static void type_text(CFI_type_t t, size_t elem_len, char *out, size_t outlen) {
  int kind = t < 0 ? 0 : (int)(t >> CFI_type_kind_shift);
  switch (category(t)) {
    case CFI_type_Integer:
      snprintf(out, outlen, "INTEGER(%d)", kind);
      break;
    case CFI_type_Logical:
      snprintf(out, outlen, "LOGICAL(%d)", kind);
      break;
    case CFI_type_Real:
      snprintf(out, outlen, "REAL(%d)", kind);
      break;
    case CFI_type_Complex:
      snprintf(out, outlen, "COMPLEX(%d)", kind);
      break;
    case CFI_type_Character:
      if (kind == 1)
        snprintf(out, outlen, "CHARACTER(len=%zu)", elem_len);
      else
        snprintf(out, outlen, "CHARACTER(kind=%d)", kind);
      break;
    case CFI_type_struct:
      snprintf(out, outlen, "derived-type");
      break;
    case CFI_type_cptr:
      snprintf(out, outlen, "TYPE(C_PTR)");
      break;
    default:
      snprintf(out, outlen, "unknown-type");
      break;
  }
}

static const char *article(const char *word) {
  return strchr("AEIOUaeiou", word[0]) && word[0] ? "an" : "a";
}

void fortran_describe_actual(const CFI_cdesc_t *d, char *out, size_t outlen) {
  char type[48];
  type_text(d->type, d->elem_len, type, sizeof type);
  if (d->rank == 0) {
    snprintf(out, outlen, "%s %s scalar", article(type), type);
  } else {
    const char *shape = "";
    if (fortran_element_count(d, 0) == SIZE_MAX)
      shape = "assumed-size ";
    else if (!CFI_is_contiguous(d))
      shape = "non-contiguous ";
    snprintf(out, outlen, "a %srank-%d %s array", shape, (int)d->rank, type);
  }
}

/* The Fortran spelling of an IDL type, for messages. */
static const char *fortran_spelling(int idl_type, int is_array) {
  if (!ninf_type_info_of(idl_type)) return "(unknown IDL type)";
  switch ((ninf_type)idl_type) {
    case NINF_TYPE_CHAR:
      return is_array ? "CHARACTER or INTEGER(1)" : "CHARACTER(len=1) or INTEGER";
    case NINF_TYPE_SHORT:
    case NINF_TYPE_INT:
    case NINF_TYPE_LONG:
      return "INTEGER";
    case NINF_TYPE_FLOAT:
      return "REAL(4)";
    case NINF_TYPE_DOUBLE:
      return "REAL(8)";
    case NINF_TYPE_SCOMPLEX:
      return "COMPLEX(4)";
    case NINF_TYPE_DCOMPLEX:
      return "COMPLEX(8)";
    case NINF_TYPE_STRING:
      return "CHARACTER";
  }
  return "(unknown IDL type)";
}

void fortran_describe_param(const ninf_param_info *p, char *out, size_t outlen) {
  const char *type = fortran_spelling(p->type, p->is_array);
  if (p->type == NINF_TYPE_STRING)
    snprintf(out, outlen, "a CHARACTER string");
  else if (!p->is_array)
    snprintf(out, outlen, "%s %s scalar", article(type), type);
  else if (p->rank == 1)
    snprintf(out, outlen, "a contiguous rank-1 %s array (or a scalar)", type);
  else
    snprintf(out, outlen, "a contiguous rank-%d %s array", p->rank, type);
}

const char *fortran_idl_type_name(int idl_type) {
  const ninf_type_info *info = ninf_type_info_of(idl_type);
  return info ? info->name : "unknown";
}
