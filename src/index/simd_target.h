// Compile-time x86 detection shared by the SIMD kernels (inner_product.cc, int8_rows.cc):
// BULWARK_X86 is 1 on x86 builds, where <immintrin.h> is available and kernels carry per-function
// target attributes (no global -m flags), and 0 elsewhere, where only the scalar kernels exist.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#define BULWARK_X86 1
#include <immintrin.h>
#else
#define BULWARK_X86 0
#endif
