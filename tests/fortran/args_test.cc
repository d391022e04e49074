// Unit tests of the argument checks of the Fortran binding
// (client/fortran/fortran_args.c): descriptors built with CFI_establish, as
// gfortran builds them, against made-up interfaces, so that every IDL type
// and every refusal is covered, including those the standard library's
// routines cannot reach (strings, char, short, complex, WORK, copy-back
// overflow).
#include <ISO_Fortran_binding.h>

#include <catch2/catch.hpp>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "client/fortran/fortran_args.h"

namespace {

// A descriptor of up to rank 3 for `base`.
struct Desc {
  CFI_CDESC_T(3) storage;
  CFI_cdesc_t *get() { return reinterpret_cast<CFI_cdesc_t *>(&storage); }
};

Desc Make(void *base, CFI_type_t type, std::size_t elem_len,
          std::vector<CFI_index_t> extents = {}) {
  Desc d;
  int rc = CFI_establish(d.get(), base, CFI_attribute_other, type, elem_len,
                         static_cast<CFI_rank_t>(extents.size()),
                         extents.empty() ? nullptr : extents.data());
  REQUIRE(rc == CFI_SUCCESS);
  return d;
}

ninf_param_info Scalar(const char *name, int type) { return {name, NINF_MODE_IN, type, 0, 0}; }
ninf_param_info Array(const char *name, int mode, int type, int rank) {
  return {name, mode, type, 1, rank};
}

// One call's worth of state: the actual arguments, and collect's results.
struct Call {
  fortran_call call;
  std::vector<ninf_binding_value> values;
  char err[512] = "";

  explicit Call(std::vector<CFI_cdesc_t *> actual) {
    CFI_cdesc_t *all[NINF_FORTRAN_MAX_ARGS] = {};
    for (std::size_t i = 0; i < actual.size(); ++i) all[i] = actual[i];
    fortran_call_init(&call, all);
  }
  ~Call() { fortran_call_release(&call); }

  int Collect(std::vector<ninf_param_info> params) {
    values.assign(params.size(), ninf_binding_value{});
    err[0] = '\0';
    return call.binding.collect(call.binding.ctx, static_cast<int>(params.size()), params.data(),
                                values.data(), err, sizeof err);
  }
  // As libninf asks once the dimensions are known: `extents` outermost
  // first, as the IDL writes them (a rank-1 parameter of `elements` when
  // none are given).
  int Verify(int index, unsigned long long elements, std::vector<unsigned long long> extents = {}) {
    err[0] = '\0';
    if (extents.empty()) extents = {elements};
    REQUIRE(call.binding.verify_shape != nullptr);
    return call.binding.verify_shape(call.binding.ctx, index, elements,
                                     static_cast<int>(extents.size()), extents.data(), err,
                                     sizeof err);
  }
  std::string Error() const { return err; }
};

}  // namespace

TEST_CASE("fortran_args_scalars_of_every_type", "[fortran_args]") {
  std::int64_t n8 = 70000;
  std::int16_t s2 = -5;
  char letter = 'A';
  float f = 1.5f;
  double d = 2.25;
  std::complex<float> cf(1.0f, -2.0f);
  std::complex<double> cd(3.0, 4.0);
  char text[10];
  std::memcpy(text, "hello     ", 10);
  Desc dn = Make(&n8, CFI_type_int64_t, 8), ds = Make(&s2, CFI_type_int16_t, 2),
       dc = Make(&letter, CFI_type_char, 1), df = Make(&f, CFI_type_float, 4),
       dd = Make(&d, CFI_type_double, 8), dcf = Make(&cf, CFI_type_float_Complex, 8),
       dcd = Make(&cd, CFI_type_double_Complex, 16), dt = Make(text, CFI_type_char, 10);
  Call c({dn.get(), ds.get(), dc.get(), df.get(), dd.get(), dcf.get(), dcd.get(), dt.get()});
  REQUIRE(c.Collect({Scalar("n", NINF_TYPE_INT), Scalar("s", NINF_TYPE_SHORT),
                     Scalar("c", NINF_TYPE_CHAR), Scalar("f", NINF_TYPE_FLOAT),
                     Scalar("d", NINF_TYPE_DOUBLE), Scalar("cf", NINF_TYPE_SCOMPLEX),
                     Scalar("cd", NINF_TYPE_DCOMPLEX), Scalar("t", NINF_TYPE_STRING)}) == 0);
  CHECK(c.values[0].i == 70000);
  CHECK(c.values[1].i == -5);
  CHECK(c.values[2].i == 'A');
  CHECK(c.values[3].d == 1.5);
  CHECK(c.values[4].d == 2.25);
  CHECK((c.values[5].re == 1.0 && c.values[5].im == -2.0));
  CHECK((c.values[6].re == 3.0 && c.values[6].im == 4.0));
  CHECK(std::string(c.values[7].s) == "hello");  // trailing blanks dropped
}

TEST_CASE("fortran_args_scalar_refusals", "[fortran_args]") {
  std::int32_t big = 70000;
  double d = 1.0;
  Desc dbig = Make(&big, CFI_type_int32_t, 4), dd = Make(&d, CFI_type_double, 8);

  Call range({dbig.get()});
  CHECK(range.Collect({Scalar("m", NINF_TYPE_SHORT)}) != 0);
  CHECK(range.Error() == "argument 1 'm': value 70000 does not fit the IDL type short");

  Call kind({dd.get()});
  CHECK(kind.Collect({Scalar("x", NINF_TYPE_FLOAT)}) != 0);
  CHECK(kind.Error() == "argument 1 'x': expected a REAL(4) scalar, got a REAL(8) scalar");

  Call out_string({dd.get()});
  ninf_param_info p = Scalar("s", NINF_TYPE_STRING);
  p.mode = NINF_MODE_OUT;
  CHECK(out_string.Collect({p}) != 0);
  CHECK(out_string.Error() == "argument 1 's': OUT strings cannot be passed from Fortran");
}

TEST_CASE("fortran_args_counts_and_gaps", "[fortran_args]") {
  int x = 1;
  Desc dx = Make(&x, CFI_type_int, 4);
  Call gap({dx.get(), nullptr, dx.get()});
  CHECK(gap.Collect({Scalar("a", NINF_TYPE_INT), Scalar("b", NINF_TYPE_INT),
                     Scalar("c", NINF_TYPE_INT)}) != 0);
  CHECK(gap.Error() == "argument 2 'b' is missing");

  Call extra({dx.get(), dx.get()});
  CHECK(extra.Collect({Scalar("a", NINF_TYPE_INT)}) != 0);
  CHECK(extra.Error() == "the function takes 1 argument (a), got 2");

  Call none({});
  CHECK(none.Collect({}) == 0);  // a routine without parameters
}

TEST_CASE("fortran_args_arrays_used_in_place", "[fortran_args]") {
  std::vector<double> a(12);
  Desc da = Make(a.data(), CFI_type_double, 8, {3, 4});
  Call c({da.get()});
  REQUIRE(c.Collect({Array("a", NINF_MODE_INOUT, NINF_TYPE_DOUBLE, 2)}) == 0);
  CHECK(c.values[0].p == a.data());
  CHECK(c.Verify(0, 12) == 0);
  CHECK(c.Verify(0, 13) != 0);
  CHECK(c.Error() == "argument 1 'a': the call moves 13 elements, the actual argument has 12");
}

TEST_CASE("fortran_args_integer_kinds_converted_and_copied_back", "[fortran_args]") {
  std::int16_t piv[4] = {1, 2, 3, 4};
  Desc dp = Make(piv, CFI_type_int16_t, 2, {4});
  Call c({dp.get()});
  REQUIRE(c.Collect({Array("ipiv", NINF_MODE_INOUT, NINF_TYPE_LONG, 1)}) == 0);
  auto *temp = static_cast<std::int64_t *>(c.values[0].p);
  REQUIRE(static_cast<void *>(temp) != static_cast<void *>(piv));
  CHECK((temp[0] == 1 && temp[3] == 4));
  REQUIRE(c.Verify(0, 3) == 0);                               // the call moves 3 of the 4 elements
  temp[0] = 10, temp[1] = 40000, temp[2] = 30, temp[3] = 99;  // what the server sends back
  fortran_call_started(&c.call);
  char err[256] = "";
  CHECK(fortran_call_copy_back(&c.call, err, sizeof err) != 0);
  CHECK(std::string(err) ==
        "argument 1 'ipiv': returned element 2 = 40000 does not fit INTEGER(2)");
  CHECK(piv[0] == 10);
  CHECK(piv[1] == 2);  // did not fit: left as it was
  CHECK(piv[2] == 30);
  CHECK(piv[3] == 4);  // beyond what the call moved
}

TEST_CASE("fortran_args_in_values_that_do_not_fit", "[fortran_args]") {
  std::int64_t v[3] = {1, 5000000000LL, 2};
  Desc dv = Make(v, CFI_type_int64_t, 8, {3});
  Call c({dv.get()});
  REQUIRE(c.Collect({Array("v", NINF_MODE_IN, NINF_TYPE_INT, 1)}) == 0);
  CHECK(c.Verify(0, 1) == 0);  // only element 1 is sent
  CHECK(c.Verify(0, 3) != 0);
  CHECK(c.Error() == "argument 1 'v': element 2 = 5000000000 does not fit the IDL type int");
}

TEST_CASE("fortran_args_shapes", "[fortran_args]") {
  double a[8] = {};
  Desc strided = Make(a, CFI_type_double, 8, {4});
  strided.get()->dim[0].sm = 16;  // a(1:8:2)
  Call nc({strided.get()});
  CHECK(nc.Collect({Array("a", NINF_MODE_IN, NINF_TYPE_DOUBLE, 1)}) != 0);
  CHECK(nc.Error().find("got a non-contiguous rank-1 REAL(8) array") != std::string::npos);

  double s = 0;  // a scalar for an array parameter: one element
  Desc ds = Make(&s, CFI_type_double, 8);
  Call scalar({ds.get()});
  REQUIRE(scalar.Collect({Array("x", NINF_MODE_OUT, NINF_TYPE_DOUBLE, 2)}) == 0);
  CHECK(scalar.Verify(0, 1) == 0);
  CHECK(scalar.Verify(0, 2) != 0);

  Desc assumed = Make(a, CFI_type_double, 8, {2, 4});
  assumed.get()->dim[1].extent = -1;  // a(2, *): the size is unknown
  Call as({assumed.get()});
  REQUIRE(as.Collect({Array("a", NINF_MODE_IN, NINF_TYPE_DOUBLE, 2)}) == 0);
  CHECK(as.Verify(0, 1000) == 0);

  std::int64_t i8[4] = {};
  Desc assumed8 = Make(i8, CFI_type_int64_t, 8, {4});
  assumed8.get()->dim[0].extent = -1;
  Call as8({assumed8.get()});
  CHECK(as8.Collect({Array("ipiv", NINF_MODE_OUT, NINF_TYPE_INT, 1)}) != 0);
  CHECK(as8.Error().find("an assumed-size INTEGER(8) array cannot be converted") !=
        std::string::npos);
}

TEST_CASE("fortran_args_char_and_work_arrays", "[fortran_args]") {
  char text[6] = {'a', 'b', 'c', 'd', 'e', 'f'};
  Desc dt = Make(text, CFI_type_char, 3, {2});  // character(len=3) :: t(2)
  std::int8_t bytes[4] = {};
  Desc db = Make(bytes, CFI_type_int8_t, 1, {4});
  float work[2];
  Desc dw = Make(work, CFI_type_float, 4, {2});
  Call c({dt.get(), db.get(), dw.get()});
  REQUIRE(c.Collect({Array("t", NINF_MODE_IN, NINF_TYPE_CHAR, 1),
                     Array("b", NINF_MODE_OUT, NINF_TYPE_CHAR, 1),
                     Array("w", NINF_MODE_WORK, NINF_TYPE_FLOAT, 1)}) == 0);
  CHECK(c.Verify(0, 6) == 0);  // six characters
  CHECK(c.Verify(0, 7) != 0);
  CHECK(c.Error() == "argument 1 't': the call moves 7 characters, the actual argument has 6");
  CHECK(c.values[1].p == bytes);
  CHECK(c.Verify(2, 1000000) == 0);  // WORK arrays live on the server only
}

TEST_CASE("fortran_args_not_read_after_the_start", "[fortran_args]") {
  std::int64_t v[2] = {1, 2};
  Desc dv = Make(v, CFI_type_int64_t, 8, {2});
  Call c({dv.get()});
  REQUIRE(c.Collect({Array("v", NINF_MODE_IN, NINF_TYPE_INT, 1)}) == 0);
  void *temp = c.values[0].p;
  fortran_call_started(&c.call);
  CHECK(c.Collect({Array("v", NINF_MODE_IN, NINF_TYPE_INT, 1)}) != 0);
  CHECK(c.call.nargs == 1);  // the running call's temporary is still there
  CHECK(c.call.args[0].temp == temp);
}

// An existing program's b(n) for the IDL's b[nrhs][ldb]: taken when it holds
// every element the call moves, as a flat array is in Python; too small, the
// message gives the declaration of the interface's shape in Fortran order.
TEST_CASE("fortran_args_rank_1_for_a_higher_rank", "[fortran_args]") {
  std::vector<double> b(10);
  Desc db = Make(b.data(), CFI_type_double, 8, {10});
  Call c({db.get()});
  REQUIRE(c.Collect({Array("b", NINF_MODE_INOUT, NINF_TYPE_DOUBLE, 2)}) == 0);
  CHECK(c.values[0].p == b.data());  // the caller's memory, no copy
  CHECK(c.Verify(0, 10, {1, 10}) == 0);
  CHECK(c.Verify(0, 20, {1, 20}) != 0);
  CHECK(c.Error() ==
        "argument 1 'b': the call moves 20 elements, the rank-1 actual argument has 10: declare "
        "it b(20,1), the interface's shape in Fortran order (a leading dimension such as ldb "
        "counts in full)");

  // Rank 3 as well: the shape is written innermost first.
  Call c3({db.get()});
  REQUIRE(c3.Collect({Array("t", NINF_MODE_IN, NINF_TYPE_DOUBLE, 3)}) == 0);
  CHECK(c3.Verify(0, 24, {2, 3, 4}) != 0);
  CHECK(c3.Error().find("declare it t(4,3,2), the interface's shape") != std::string::npos);

  // A rank-1 section with a step is still refused: it is not one block.
  Desc strided = Make(b.data(), CFI_type_double, 8, {5});
  strided.get()->dim[0].sm = 16;
  Call nc({strided.get()});
  CHECK(nc.Collect({Array("b", NINF_MODE_INOUT, NINF_TYPE_DOUBLE, 2)}) != 0);
  CHECK(nc.Error() ==
        "argument 1 'b': expected a contiguous rank-2 REAL(8) array, got a non-contiguous "
        "rank-1 REAL(8) array (copy the section into a contiguous array first)");
}

// Ranks other than 1 must match, and the message says a flat array is taken.
TEST_CASE("fortran_args_other_rank_mismatches", "[fortran_args]") {
  std::vector<double> a(24);
  Desc d3 = Make(a.data(), CFI_type_double, 8, {2, 3, 4});
  Call c({d3.get()});
  CHECK(c.Collect({Array("a", NINF_MODE_IN, NINF_TYPE_DOUBLE, 2)}) != 0);
  CHECK(c.Error() ==
        "argument 1 'a': expected a contiguous rank-2 REAL(8) array, got a rank-3 REAL(8) array "
        "(a contiguous rank-1 array that holds all its elements is taken too)");
}
