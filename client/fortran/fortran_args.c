/* fortran_args.c - checks, conversions and copy-back of a Fortran call's
 * arguments (see fortran_args.h for the contract). */
#include "client/fortran/fortran_args.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/fortran/fortran_types.h"

/* "argument 3 'a': expected a contiguous rank-2 REAL(8) array, got an INTEGER(4) scalar" */
static int refuse_type(int index, const ninf_param_info *p, const CFI_cdesc_t *d, char *err,
                       size_t errlen) {
  char want[96], got[96];
  fortran_describe_param(p, want, sizeof want);
  fortran_describe_actual(d, got, sizeof got);
  snprintf(err, errlen, "argument %d '%s': expected %s, got %s", index + 1, p->name, want, got);
  return -1;
}

/* "'dgesv' takes 8 arguments (n, nrhs, a, lda, ipiv, b, ldb, info), got 7" */
static int refuse_count(const fortran_call *call, int nparams, const ninf_param_info *params,
                        char *err, size_t errlen) {
  char names[160] = "";
  size_t used = 0;
  for (int i = 0; i < nparams && used < sizeof names; i++)
    used +=
        (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", params[i].name);
  const char *noun = nparams == 1 ? "argument" : "arguments";
  if (call->label)
    snprintf(err, errlen, "'%s' takes %d %s (%s), got %d", call->label, nparams, noun, names,
             call->nactual);
  else
    snprintf(err, errlen, "the function takes %d %s (%s), got %d", nparams, noun, names,
             call->nactual);
  return -1;
}

/* An IN scalar: its value goes into the ARGS frame, so any integer kind is
 * read and range-checked against the IDL type here. */
static int collect_scalar(int index, const ninf_param_info *p, const CFI_cdesc_t *d, fortran_arg *a,
                          ninf_binding_value *v, char *err, size_t errlen) {
  if (p->type == NINF_TYPE_STRING && p->mode != NINF_MODE_IN) {
    snprintf(err, errlen, "argument %d '%s': OUT strings cannot be passed from Fortran", index + 1,
             p->name);
    return -1;
  }
  int one = d->rank == 0 || (p->type != NINF_TYPE_STRING && fortran_element_count(d, 0) == 1);
  if (!one || fortran_match_type(p->type, 0, d->type, d->elem_len) == FORTRAN_MISMATCH)
    return refuse_type(index, p, d, err, errlen);
  const void *x = d->base_addr;
  const ninf_type_info *info = ninf_type_info_of(p->type); /* known: matched above */
  switch (info->cls) {
    case NINF_CLASS_STRING:
      a->text = fortran_string(d);
      if (!a->text) return snprintf(err, errlen, "out of memory"), -1;
      v->s = a->text;
      return 0;
    case NINF_CLASS_REAL:
      if (info->element_size == sizeof(float)) {
        float f;
        memcpy(&f, x, sizeof f);
        v->d = f;
      } else {
        memcpy(&v->d, x, sizeof v->d);
      }
      return 0;
    case NINF_CLASS_COMPLEX:
      if (info->element_size == 2 * sizeof(float)) {
        float c[2];
        memcpy(c, x, sizeof c);
        v->re = c[0], v->im = c[1];
      } else {
        double c[2];
        memcpy(c, x, sizeof c);
        v->re = c[0], v->im = c[1];
      }
      return 0;
    case NINF_CLASS_INTEGER:
      break; /* below */
  }
  long long i =
      d->type == CFI_type_char ? *(const unsigned char *)x : fortran_get_int(x, d->elem_len);
  if (!fortran_int_fits(i, fortran_idl_int_size(p->type))) {
    snprintf(err, errlen, "argument %d '%s': value %lld does not fit the IDL type %s", index + 1,
             p->name, i, fortran_idl_type_name(p->type));
    return -1;
  }
  v->i = i;
  return 0;
}

/* An integer array of another kind: a temporary of the IDL type. Values
 * that do not fit are remembered, not refused yet: only the elements the
 * call sends matter, and verify_shape() learns how many those are. */
static int convert_array(int index, const ninf_param_info *p, const CFI_cdesc_t *d, fortran_arg *a,
                         char *err, size_t errlen) {
  if (a->count == SIZE_MAX) {
    snprintf(err, errlen,
             "argument %d '%s': an assumed-size INTEGER(%zu) array cannot be converted to the "
             "IDL type %s; pass an INTEGER(%zu) array",
             index + 1, p->name, d->elem_len, fortran_idl_type_name(p->type),
             fortran_idl_int_size(p->type));
    return -1;
  }
  a->temp_size = fortran_idl_int_size(p->type);
  a->temp = calloc(a->count ? a->count : 1, a->temp_size);
  if (!a->temp) return snprintf(err, errlen, "out of memory"), -1;
  if (p->mode == NINF_MODE_OUT) return 0; /* nothing to send */
  const char *in = d->base_addr;
  char *out = a->temp;
  for (size_t i = 0; i < a->count; i++) {
    long long x = fortran_get_int(in + i * d->elem_len, d->elem_len);
    if (!fortran_int_fits(x, a->temp_size) && a->first_bad == SIZE_MAX)
      a->first_bad = i, a->bad_value = x;
    fortran_put_int(out + i * a->temp_size, a->temp_size, x);
  }
  return 0;
}

/* Arrays and pointer parameters (OUT int *info): the caller's memory goes
 * straight to the wire when the representation matches. */
static int collect_array(int index, const ninf_param_info *p, const CFI_cdesc_t *d, fortran_arg *a,
                         ninf_binding_value *v, char *err, size_t errlen) {
  size_t n = fortran_element_count(d, 0);
  /* A rank-1 array stands for an array of any rank, as Fortran's sequence
   * association lets an existing program pass b(n) for a dummy b(ldb,nrhs)
   * and as the Python client takes a flat array: the IDL's dimensions say
   * how the elements are laid out, and verify_shape() checks that the
   * array holds all the call moves. Other ranks must match. */
  int rank_ok = d->rank <= 1 || d->rank == p->rank || n == 1;
  fortran_match m = fortran_match_type(p->type, 1, d->type, d->elem_len);
  if (m == FORTRAN_MISMATCH) return refuse_type(index, p, d, err, errlen);
  if (!rank_ok) {
    refuse_type(index, p, d, err, errlen);
    size_t used = strlen(err);
    snprintf(err + used, errlen - used,
             " (a contiguous rank-1 array that holds all its elements is taken too)");
    return -1;
  }
  v->p = d->base_addr;
  if (p->mode == NINF_MODE_WORK) { /* never read nor written on this side */
    a->count = a->transfer = SIZE_MAX;
    return 0;
  }
  if (d->rank > 0 && n != 0 && !CFI_is_contiguous(d)) {
    refuse_type(index, p, d, err, errlen);
    size_t used = strlen(err);
    snprintf(err + used, errlen - used, " (copy the section into a contiguous array first)");
    return -1;
  }
  a->count = a->transfer = fortran_element_count(d, 1);
  if (m == FORTRAN_DIRECT) return 0;
  if (convert_array(index, p, d, a, err, errlen) != 0) return -1;
  v->p = a->temp;
  return 0;
}

static void release_args(fortran_call *call) {
  for (int i = 0; i < call->nargs; i++) {
    free(call->args[i].temp);
    free(call->args[i].text);
  }
  free(call->args);
  call->args = NULL;
  call->nargs = 0;
}

static int collect(void *ctx, int nparams, const ninf_param_info *params,
                   ninf_binding_value *values, char *err, size_t errlen) {
  fortran_call *call = ctx;
  /* After the start the temporaries are in use and the descriptors gone. */
  if (call->started)
    return snprintf(err, errlen, "internal error: arguments read after the call left"), -1;
  release_args(call); /* collect may run again for a retried call */
  if (call->early[0]) return snprintf(err, errlen, "%s", call->early), -1;
  if (call->nactual != nparams) return refuse_count(call, nparams, params, err, errlen);
  call->args = calloc(nparams ? (size_t)nparams : 1, sizeof *call->args);
  if (!call->args) return snprintf(err, errlen, "out of memory"), -1;
  call->nargs = nparams;
  for (int i = 0; i < nparams; i++) {
    fortran_arg *a = &call->args[i];
    const ninf_param_info *p = &params[i];
    snprintf(a->name, sizeof a->name, "%s", p->name ? p->name : "?");
    a->mode = p->mode;
    a->type = p->type;
    a->first_bad = SIZE_MAX;
    const CFI_cdesc_t *d = call->actual[i];
    if (!d) return snprintf(err, errlen, "argument %d '%s' is missing", i + 1, a->name), -1;
    a->base = d->base_addr;
    a->elem_len = d->elem_len;
    a->is_character = d->type == CFI_type_char;
    a->rank = d->rank;
    int rc = p->is_array ? collect_array(i, p, d, a, &values[i], err, errlen)
                         : collect_scalar(i, p, d, a, &values[i], err, errlen);
    if (rc != 0) return -1;
  }
  return 0;
}

/* An array of lower rank than the IDL's that is too small: most often an
 * existing program's b(n) where the interface says b[nrhs][ldb] with a
 * larger ldb. The fix is the declaration of the interface's shape, which
 * Fortran writes innermost first: "b(20,1)" for extents {1, 20}. */
static void refuse_shape(int index, const fortran_arg *a, unsigned long long elements, int rank,
                         const unsigned long long *extents, char *err, size_t errlen) {
  size_t used = (size_t)snprintf(err, errlen,
                                 "argument %d '%s': the call moves %llu elements, the rank-%d "
                                 "actual argument has %zu: declare it %s(",
                                 index + 1, a->name, elements, a->rank, a->count, a->name);
  for (int r = rank - 1; r >= 0 && used < errlen; r--)
    used += (size_t)snprintf(err + used, errlen - used, "%llu%s", extents[r], r ? "," : "");
  if (used < errlen)
    snprintf(err + used, errlen - used,
             "), the interface's shape in Fortran order (a leading dimension such as ldb counts "
             "in full)");
}

static int verify_shape(void *ctx, int index, unsigned long long elements, int rank,
                        const unsigned long long *extents, char *err, size_t errlen) {
  fortran_call *call = ctx;
  if (index < 0 || index >= call->nargs) return 0;
  fortran_arg *a = &call->args[index];
  if (a->count == SIZE_MAX) return 0; /* WORK, or assumed-size: the extent is unknown */
  if (elements > a->count) {
    if (a->rank == 1 && rank >= 2 && extents && !a->is_character) {
      refuse_shape(index, a, elements, rank, extents, err, errlen);
      return -1;
    }
    const char *unit = a->is_character ? "characters" : "elements";
    snprintf(err, errlen, "argument %d '%s': the call moves %llu %s, the actual argument has %zu",
             index + 1, a->name, elements, unit, a->count);
    return -1;
  }
  a->transfer = (size_t)elements;
  if (a->temp && a->mode != NINF_MODE_OUT && a->first_bad < a->transfer) {
    snprintf(err, errlen, "argument %d '%s': element %zu = %lld does not fit the IDL type %s",
             index + 1, a->name, a->first_bad + 1, a->bad_value, fortran_idl_type_name(a->type));
    return -1;
  }
  return 0;
}

void fortran_call_init(fortran_call *call, CFI_cdesc_t *const actual[NINF_FORTRAN_MAX_ARGS]) {
  memset(call, 0, sizeof *call);
  for (int i = 0; i < NINF_FORTRAN_MAX_ARGS; i++) {
    call->actual[i] = actual[i];
    if (actual[i]) call->nactual = i + 1;
  }
  call->binding.collect = collect;
  call->binding.verify_shape = verify_shape;
  call->binding.ctx = call;
}

void fortran_call_started(fortran_call *call) {
  memset(call->actual, 0, sizeof call->actual);
  call->started = 1;
}

int fortran_call_has_temporaries(const fortran_call *call) {
  for (int i = 0; i < call->nargs; i++)
    if (call->args[i].temp || call->args[i].text) return 1;
  return 0;
}

void fortran_call_refuse(fortran_call *call, const char *message) {
  snprintf(call->early, sizeof call->early, "%s", message);
}

/* Integer(1) actual arguments are signed, unlike the IDL's char. */
static int fits_actual(long long v, size_t size) {
  return size == 1 ? v >= -128 && v <= 127 : fortran_int_fits(v, size);
}

int fortran_call_copy_back(fortran_call *call, char *err, size_t errlen) {
  int rc = 0;
  for (int k = 0; k < call->nargs; k++) {
    fortran_arg *a = &call->args[k];
    if (!a->temp || (a->mode != NINF_MODE_OUT && a->mode != NINF_MODE_INOUT)) continue;
    size_t n = a->transfer < a->count ? a->transfer : a->count;
    size_t size = a->elem_len;
    char *out = a->base;
    const char *in = a->temp;
    for (size_t i = 0; i < n; i++) {
      long long v = fortran_get_int(in + i * a->temp_size, a->temp_size);
      if (fits_actual(v, size)) {
        fortran_put_int(out + i * size, size, v);
      } else if (rc == 0) { /* leave it untouched, report the first */
        snprintf(err, errlen,
                 "argument %d '%s': returned element %zu = %lld does not fit INTEGER(%zu)", k + 1,
                 a->name, i + 1, v, size);
        rc = -1;
      }
    }
  }
  return rc;
}

void fortran_call_release(fortran_call *call) { release_args(call); }

char *fortran_string(const CFI_cdesc_t *d) {
  if (!d || d->type != CFI_type_char || d->rank != 0) return NULL;
  const char *s = d->base_addr;
  size_t len = d->elem_len;
  const char *nul = memchr(s, '\0', len); /* 'name'//c_null_char, out of C habit */
  if (nul) len = (size_t)(nul - s);
  while (len > 0 && s[len - 1] == ' ') len--;
  char *out = malloc(len + 1);
  if (!out) return NULL;
  memcpy(out, s, len);
  out[len] = '\0';
  return out;
}
