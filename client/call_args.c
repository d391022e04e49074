#include "client/call_args.h"

#include <complex.h>

void ninf__collect_args(const ninf_argkind *kinds, int count, va_list *ap, ninf_argvalue *out) {
  for (int k = 0; k < count; ++k) {
    ninf_argvalue *v = &out[k];
    v->i = 0;
    v->d = v->re = v->im = 0;
    v->s = 0;
    v->p = 0;
    switch (kinds[k]) {
      case NINF_ARGKIND_INT:
        v->i = va_arg(*ap, int);
        break;
      case NINF_ARGKIND_LONG:
        v->i = va_arg(*ap, long);
        break;
      case NINF_ARGKIND_DOUBLE:
        v->d = va_arg(*ap, double);
        break;
      case NINF_ARGKIND_SCOMPLEX: {
        float _Complex z = va_arg(*ap, float _Complex);
        v->re = crealf(z);
        v->im = cimagf(z);
        break;
      }
      case NINF_ARGKIND_DCOMPLEX: {
        double _Complex z = va_arg(*ap, double _Complex);
        v->re = creal(z);
        v->im = cimag(z);
        break;
      }
      case NINF_ARGKIND_STRING:
        v->s = va_arg(*ap, const char *);
        break;
      case NINF_ARGKIND_POINTER:
        v->p = va_arg(*ap, void *);
        break;
    }
  }
}
