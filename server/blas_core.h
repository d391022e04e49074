// Which OpenBLAS kernels the executables run. OpenBLAS (a DYNAMIC_ARCH
// build, as Debian's) picks its kernels when it is loaded, from the CPU's
// family and model; a CPU newer than the library falls back to generic SSE3
// kernels ("Prescott"), whatever the CPU can do. Debian 12's 0.3.21 does so
// on Intel's model 207 (Emerald Rapids, AVX-512): dgesv at n = 2000 ran
// three times slower than with its SkylakeX kernels. ninfd looks once, at
// start-up, which kernel the library picks here and, when that is below
// what the CPU runs, gives its executables OPENBLAS_CORETYPE (the library's
// own override) naming the best that fits. An OPENBLAS_CORETYPE in ninfd's
// environment is the administrator's choice and is left alone.
#pragma once

#include <string>
#include <string_view>

namespace ninf::server {

// The vector instruction sets that OpenBLAS's x86-64 kernels need, as the
// CPU and the kernel both support them (the OS saving the registers
// included).
struct CpuIsa {
  bool avx = false;
  bool avx2_fma = false;  // AVX2 and FMA3: Haswell's kernels
  bool avx512 = false;    // AVX-512 F, CD, BW, DQ and VL: SkylakeX's kernels
};

// This machine's.
CpuIsa HostIsa();

// The kernel OpenBLAS picks on this machine (openblas_get_corename, e.g.
// "Prescott", "Haswell", "SkylakeX"), asked of the library loaded in a
// short-lived child process with one thread, so that ninfd never holds
// OpenBLAS or its threads. "" when it cannot be loaded.
std::string DetectedOpenblasCore();

// The kernel to give the executables (an OPENBLAS_CORETYPE value) when
// `detected` needs less than `cpu` has: "SkylakeX" for AVX-512, "Haswell"
// for AVX2, "Sandybridge" for AVX. "" to leave the library's choice: it is
// already as good, or a name this table does not know (a newer library
// knows better than we do). Pure.
std::string PreferredOpenblasCore(std::string_view detected, CpuIsa cpu);

}  // namespace ninf::server
