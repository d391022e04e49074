/*
 * ninf_types.h - the one table of Ninf IDL types, and of parameter modes.
 *
 * Everything that knows about types is derived from NINF_TYPE_MAP: the
 * NINF_TYPE_* codes (checked against ninf.proto's Type enum by
 * protocol/types.cc), element sizes and names (protocol/layout.cc), the IDL
 * keywords and the C types of generated stubs (idl/), how C varargs are
 * read (client/call_args.c), scalar encoding on the wire
 * (protocol/scalar_codec.cc) and the Fortran type matching
 * (client/fortran/fortran_types.c). Adding a type is one row here plus the
 * cases the compiler then asks for (-Wswitch-enum; see docs/CONTRIBUTING.md).
 *
 * A C header (the Fortran binding's C half and ninf_binding.h use it); it
 * includes nothing.
 */
#ifndef NINF_TYPES_H
#define NINF_TYPES_H

/*
 * X(NAME, Name, wire value, IDL keyword, C type, element bytes, class, vararg kind)
 *
 *   NAME, Name   NINF_TYPE_NAME, and the idl/ enumerator Type::kName
 *   wire value   the value of ninf.proto's TYPE_NAME; stable, only append
 *   C type       what a generated stub passes to the routine
 *   bytes        one array element (0: never an array)
 *   class        INTEGER, REAL, COMPLEX or STRING (ninf_type_class)
 *   vararg kind  how Ninf_call reads the value from C varargs (ninf_argkind):
 *                C's default promotions make char and short arrive as int
 *                and float as double; complex values are not promoted.
 */
#define NINF_TYPE_MAP(X)                                                       \
  X(CHAR, Char, 0, "char", char, 1, INTEGER, INT)                              \
  X(SHORT, Short, 1, "short", short, 2, INTEGER, INT)                          \
  X(INT, Int, 2, "int", int, 4, INTEGER, INT)                                  \
  X(LONG, Long, 3, "long", long, 8, INTEGER, LONG)                             \
  X(FLOAT, Float, 4, "float", float, 4, REAL, DOUBLE)                          \
  X(DOUBLE, Double, 5, "double", double, 8, REAL, DOUBLE)                      \
  X(SCOMPLEX, Scomplex, 6, "scomplex", float _Complex, 8, COMPLEX, SCOMPLEX)   \
  X(DCOMPLEX, Dcomplex, 7, "dcomplex", double _Complex, 16, COMPLEX, DCOMPLEX) \
  X(STRING, String, 8, "string", char, 0, STRING, STRING)

typedef enum {
#define NINF_TYPE_ENUM_(NAME, Name, value, keyword, ctype, bytes, cls, kind) \
  NINF_TYPE_##NAME = value,
  NINF_TYPE_MAP(NINF_TYPE_ENUM_)
#undef NINF_TYPE_ENUM_
} ninf_type;

/* How many types there are (kept out of ninf_type so that switches over it
 * need no case for the count). */
enum {
#define NINF_TYPE_COUNT_ONE_(...) +1
  NINF_TYPE_COUNT = 0 NINF_TYPE_MAP(NINF_TYPE_COUNT_ONE_)
#undef NINF_TYPE_COUNT_ONE_
};

typedef enum {
  NINF_CLASS_INTEGER, /* char, short, int, long: range-checked on decode */
  NINF_CLASS_REAL,    /* float, double */
  NINF_CLASS_COMPLEX, /* scomplex, dcomplex: (re, im) pairs */
  NINF_CLASS_STRING   /* IN scalar only: a NUL-terminated C string */
} ninf_type_class;

/* How Ninf_call reads one argument from C varargs. */
typedef enum {
  NINF_ARGKIND_INT = 0,      /* char, short, int: promoted to int */
  NINF_ARGKIND_LONG = 1,     /* long */
  NINF_ARGKIND_DOUBLE = 2,   /* float (promoted to double), double */
  NINF_ARGKIND_SCOMPLEX = 3, /* float _Complex: not promoted */
  NINF_ARGKIND_DCOMPLEX = 4, /* double _Complex */
  NINF_ARGKIND_STRING = 5,   /* const char * */
  NINF_ARGKIND_POINTER = 6   /* arrays and OUT scalars */
} ninf_argkind;

/* Parameter modes: the values of ninf.proto's Mode enum. */
#define NINF_MODE_MAP(X) \
  X(IN, 0, "IN")         \
  X(OUT, 1, "OUT")       \
  X(INOUT, 2, "INOUT")   \
  X(WORK, 3, "WORK") /* scratch space allocated by the executable, never sent */

typedef enum {
#define NINF_MODE_ENUM_(NAME, value, word) NINF_MODE_##NAME = value,
  NINF_MODE_MAP(NINF_MODE_ENUM_)
#undef NINF_MODE_ENUM_
} ninf_mode;

/* Facts of one type, from the table (a C-callable view of it). */
typedef struct {
  const char *name;      /* IDL keyword: "double" */
  const char *c_type;    /* C type in generated stubs: "double _Complex" */
  unsigned element_size; /* bytes of one array element (0 for string) */
  ninf_type_class cls;
  ninf_argkind vararg;
} ninf_type_info;

/* The row of `type` (a NINF_TYPE_* value), or NULL for a value outside the
 * table. Rows are indexed by wire value: protocol/types.cc checks that the
 * values run 0, 1, 2, ... */
static inline const ninf_type_info *ninf_type_info_of(int type) {
  static const ninf_type_info rows[] = {
#define NINF_TYPE_ROW_(NAME, Name, value, keyword, ctype, bytes, cls, kind) \
  {keyword, #ctype, bytes, NINF_CLASS_##cls, NINF_ARGKIND_##kind},
      NINF_TYPE_MAP(NINF_TYPE_ROW_)
#undef NINF_TYPE_ROW_
  };
  return type >= 0 && type < NINF_TYPE_COUNT ? &rows[type] : 0;
}

/*
 * One scalar argument as the client holds it before encoding: integers in
 * i (char, short, int, long), reals in d, complex in re/im, strings in s
 * (NUL-terminated). Arrays and pointer parameters: the first element's
 * address in p. Filled by the varargs reader and by language bindings.
 */
typedef struct {
  long long i;
  double d;
  double re, im;
  const char *s;
  void *p;
} ninf_binding_value;

#endif /* NINF_TYPES_H */
