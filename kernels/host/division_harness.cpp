// Host build of rp_div_const (kernels/common.cuh) for tests/gpu_host_division.rs: compares
// it bit for bit with the division for the divisors the spline weights use, over dividends
// drawn from the range it promises (+0, and 2^-900 <= |a| <= 2^900) and from the weights' own
// range (+0, and 2^-265 to 8, kernels/interp.cuh). Also counts where a / d and a * (1 / d)
// differ, so that the comparison is seen to tell two roundings apart.
// Built with -O2 -ffp-contract=off.
//
//   division_harness SEED COUNT
// prints one line per divisor: "d checked mismatches product_differs"; exits 1 on a mismatch.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.cuh"

static uint64_t state;

// splitmix64
static uint64_t next_u64(void) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t bits(double v) {
    uint64_t u;
    memcpy(&u, &v, 8);
    return u;
}

// A random double of either sign with a random significand and a biased exponent in
// [1023 + lo, 1023 + hi].
static double with_exponent(int lo, int hi) {
    uint64_t r = next_u64();
    uint64_t e = (uint64_t)(1023 + lo + (int)(next_u64() % (uint64_t)(hi - lo + 1)));
    uint64_t u = (r & 0x800fffffffffffffULL) | (e << 52);
    double v;
    memcpy(&v, &u, 8);
    return v;
}

#include "asan_options.h"

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    state = strtoull(argv[1], 0, 10);
    long long count = atoll(argv[2]);
    const double divisors[] = {6.0, 12.0, 24.0, 120.0};
    int failed = 0;
    for (double d : divisors) {
        double inv = 1.0 / d;
        long long checked = 0, mismatches = 0, product_differs = 0;
        for (long long i = 0; i < count; i++) {
            double a;
            switch (i % 4) {
            case 0:  // the promised range
                a = with_exponent(-900, 900);
                break;
            case 1:  // the weights' dividends: up to 8
                a = 8.0 * (double)(next_u64() >> 11) / 9007199254740992.0;
                break;
            case 2:  // the weights' smallest dividends
                a = fabs(with_exponent(-265, -200));
                break;
            default:  // near the top and the bottom of the promised range
                a = with_exponent(i % 8 == 3 ? -900 : 890, i % 8 == 3 ? -890 : 900);
                break;
            }
            if (i == 0) a = 0.0;
            if (i == 1) a = ldexp(1.0, -265);
            if (i == 2) a = 8.0;
            double want = a / d;
            double got = rp_div_const(a, d, inv);
            checked++;
            if (bits(a * inv) != bits(want)) product_differs++;
            if (bits(got) != bits(want)) {
                if (mismatches == 0)
                    fprintf(stderr, "%.17g / %g: division %.17g, rp_div_const %.17g\n", a, d,
                            want, got);
                mismatches++;
            }
        }
        printf("%g %lld %lld %lld\n", d, checked, mismatches, product_differs);
        if (mismatches) failed = 1;
    }
    return failed;
}
