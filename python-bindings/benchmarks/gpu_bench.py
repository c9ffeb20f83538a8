"""The GPU jobs of issue 17 from Python: ``reproject_rs.reproject_interp`` with
``device='cuda'`` on numpy arrays (host-resident) and on CuPy arrays (device-resident, when
CuPy is installed), with reproject's other defaults, against ``device='cpu'`` on every core
(``parallel=True``) and against the copies of the same
bytes, with a line per goal and its measured ratio, and each job with the default device
('auto') beside them.

    python gpu_bench.py [SIZE]          # SIZE defaults to 16384 (TAN jobs; CAR and SIP use SIZE/4)

Needs a GPU (or ``REPROJECT_RS_CUDA_SIM=1``, whose times mean nothing), numpy and astropy; the
GPU bundle (scripts/gpu_bundle.sh) runs it with the wheels it carries. Each time is the best of
3 runs after a warm-up.
"""

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from astropy.io import fits

import reproject_rs

REPEATS = 3

try:  # the device-resident jobs need CuPy
    import cupy as cp
except ImportError:  # pragma: no cover - depends on the machine
    cp = None


def best(f):
    """Best wall time of REPEATS runs of f, after one warm-up run (and its result) and the
    GPU kernel variants it set compiling."""
    result = f()
    reproject_rs._core.wait_for_compilations()
    times = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        f()
        if cp is not None:
            cp.cuda.runtime.deviceSynchronize()
        times.append(time.perf_counter() - t)
    return min(times), result


def tan(crval, crpix, cdelt, rot, shape):
    c, s = np.cos(np.radians(rot)), np.sin(np.radians(rot))
    h = fits.Header()
    h["NAXIS"], h["NAXIS1"], h["NAXIS2"] = 2, shape[1], shape[0]
    h["CTYPE1"], h["CTYPE2"] = "RA---TAN", "DEC--TAN"
    h["CRVAL1"], h["CRVAL2"] = crval
    h["CRPIX1"] = h["CRPIX2"] = crpix
    h["CD1_1"], h["CD1_2"], h["CD2_1"], h["CD2_2"] = -cdelt * c, cdelt * s, cdelt * s, cdelt * c
    return h


def goal(what, ratio, bound, at_most):
    met = ratio <= bound if at_most else ratio >= bound
    sign = "<=" if at_most else ">="
    print(f"  goal {what}: {ratio:.2f} ({sign} {bound}) {'met' if met else 'MISSED'}")


def mpix(n, t):
    return f"{t * 1e3:8.1f} ms  {n / t / 1e6:8.0f} Mpix/s"


def tan_job(size, order):
    """TAN -> TAN, float32: CPU, GPU from numpy, GPU from CuPy; returns the CuPy time."""
    y, x = np.mgrid[:size, :size].astype(np.float32)
    image = np.sin(x * 0.001) * 100 + y * 0.01
    del x, y
    h_in = tan((150.0, 2.0), size / 2 + 0.5, 1e-4, 0.0, (size, size))
    h_out = tan((150.01, 2.01), size / 2 + 0.5, 1.05e-4, 12.0, (size, size))

    def run(data, device, **outputs):
        # The CPU on every core (parallel=True); the GPU with reproject's defaults.
        return reproject_rs.reproject_interp((data, h_in), h_out, shape_out=(size, size),
                                             order=order, device=device,
                                             parallel=device == "cpu", **outputs)

    n = size * size
    print(f"\n{size}x{size} float32 {order} TAN -> TAN from Python")
    t_cpu, cpu = best(lambda: run(image, "cpu"))
    t_host, gpu = best(lambda: run(image, "cuda"))
    print(f"  CPU (device='cpu', parallel=True) {mpix(n, t_cpu)}")
    print(f"  GPU from numpy (host-resident) {mpix(n, t_host)}")
    finite = np.isfinite(cpu[0])
    rel = np.max(np.abs(gpu[0][finite] - cpu[0][finite]) / np.maximum(np.abs(cpu[0][finite]), 1e-300))
    print(f"  max relative difference {rel:.2e}; footprints identical: "
          f"{np.array_equal(gpu[1], cpu[1])}")
    goal("CPU / GPU host-resident", t_cpu / t_host, 5.0, False)
    default_line(lambda: reproject_rs.reproject_interp((image, h_in), h_out,
                                                       shape_out=(size, size), order=order,
                                                       parallel=True), n, t_cpu, t_host)
    host_memory_lines(image, run, n)
    if order == "bilinear":
        fresh_outputs_given_line(image, h_in, h_out, size)
    if cp is None:
        print("  (no CuPy: device-resident jobs skipped)")
        return None
    d_image = cp.asarray(image)
    t_dev, _ = best(lambda: run(d_image, "cuda"))
    t_d2d, _ = best(lambda: d_image.copy())
    pinned = cp.cuda.alloc_pinned_memory(image.nbytes)
    host = np.frombuffer(pinned, image.dtype, image.size).reshape(image.shape)
    host[...] = image

    def round_trip():
        d_image.set(host)
        d_image.get(out=host)

    t_pcie, _ = best(round_trip)
    print(f"  GPU from CuPy (device-resident) {mpix(n, t_dev)}")
    print(f"  pinned H2D + D2H of the input {t_pcie * 1e3:8.1f} ms; D2D copy {t_d2d * 1e3:8.1f} ms")
    # What must cross: the float32 input up, the values down (the footprint is derived on the
    # host), as float64 (the Python API returns float64) unless reproject rounds them to
    # float32 (splines): 12 or 8 bytes a pixel, against the round trip's 8.
    down = 8 if order in ("nearest-neighbor", "bilinear") else 4
    floor = t_pcie * (4 + down) / 8
    goal("host-resident / pinned copy of the bytes that cross", t_host / floor, 1.5, True)
    goal("device-resident / D2D copy of the bytes touched", t_dev / (1.5 * t_d2d), 2.0, True)
    return t_dev


def default_line(call, n, t_cpu, t_gpu):
    """The job with the default device ('auto': the cost model picks) on every core, beside
    the CPU's and the GPU's times: whether the default is the faster of the two."""
    t_auto, _ = best(call)
    fastest = min(t_cpu, t_gpu)
    print(f"  default device='auto' (parallel=True) {mpix(n, t_auto)}  "
          f"({t_auto / fastest:.2f}x the faster of CPU and GPU)")


def host_memory_lines(image, run, n):
    """What host memory costs a call from numpy: the fresh float64 data and footprint every
    call returns, written once on every core (the kernel zeroes each new page first), and
    the same job into output arrays the caller reuses (float32, the input's dtype, as
    reproject requires of output_array), CPU and GPU."""
    threads = os.cpu_count() or 1

    def fresh_outputs():
        arrays = [np.empty(image.shape) for _ in range(2)]
        parts = [(a, rows) for a in arrays for rows in np.array_split(np.arange(len(a)), threads)]
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda p: p[0][p[1][0]:p[1][-1] + 1].fill(1.0), parts))
        return arrays

    t_fresh, _ = best(fresh_outputs)
    print(f"  fresh float64 outputs, written once on {threads} threads {mpix(n, t_fresh)}")
    reused = np.empty(image.shape, np.float32), np.empty(image.shape, np.float32)

    def into_reused(device):
        return lambda: run(image, device, output_array=reused[0], output_footprint=reused[1])

    t_cpu, _ = best(into_reused("cpu"))
    t_gpu, _ = best(into_reused("cuda"))
    print(f"  CPU into reused float32 outputs   {mpix(n, t_cpu)}")
    print(f"  GPU into reused float32 outputs   {mpix(n, t_gpu)}  (CPU / GPU {t_cpu / t_gpu:.2f})")


def fresh_outputs_given_line(image, h_in, h_out, size):
    """The GPU job into fresh float64 outputs two ways: the arrays reproject_rs allocates
    (the plan is told they are fresh: a host thread per core stores them) and untouched
    np.empty arrays passed as output_array/output_footprint (the bindings find them fresh
    from their pages and tell the plan, so the same threads and blocks: the two times should
    be level). Float64 input, as output_array must have the input's dtype."""
    data = image.astype(np.float64)
    shape = (size, size)

    def call(given):
        def run():
            # New arrays each call (made once, they would be written by the warm-up call and
            # reused: session 18's first run timed that, 110.7 ms, as if fresh).
            outputs = {}
            if given:
                outputs = dict(output_array=np.empty(shape), output_footprint=np.empty(shape))
            return reproject_rs.reproject_interp((data, h_in), h_out, shape_out=shape,
                                                 order="bilinear", device="cuda", **outputs)
        return run

    t_own, _ = best(call(False))
    t_given, _ = best(call(True))
    print(f"  GPU into fresh float64 outputs (float64 in): allocated by reproject_rs "
          f"{t_own * 1e3:.1f} ms, np.empty given {t_given * 1e3:.1f} ms")


def other_job(label, data, h_in, h_out, m):
    def run(device):
        return reproject_rs.reproject_interp((data, h_in), h_out, shape_out=(m, m),
                                             device=device, parallel=device == "cpu")

    t_cpu, cpu = best(lambda: run("cpu"))
    t_gpu, gpu = best(lambda: run("cuda"))
    print(f"\n{label}, {m}x{m} from Python")
    print(f"  CPU (parallel=True)           {mpix(m * m, t_cpu)}")
    print(f"  GPU (host-resident)           {mpix(m * m, t_gpu)}")
    print(f"  footprints identical: {np.array_equal(gpu[1], cpu[1])}")
    goal("CPU / GPU host-resident", t_cpu / t_gpu, 3.0, False)
    default_line(lambda: reproject_rs.reproject_interp((data, h_in), h_out, shape_out=(m, m),
                                                       parallel=True), m * m, t_cpu, t_gpu)


def main():
    size = int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ.get("SIZE", 16384))
    try:
        print("\n".join(reproject_rs.warmup("cuda")))
    except reproject_rs.DeviceUnavailableError as e:
        print(f"SKIPPED gpu_bench.py: {e}")
        return 0
    bilinear = tan_job(size, "bilinear")
    bicubic = tan_job(size, "bicubic")
    if bilinear and bicubic:
        print(f"\n{size}x{size} bicubic against bilinear from CuPy")
        goal("device-resident bicubic / bilinear", bicubic / bilinear, 3.0, True)
    m = max(size // 4, 256)
    y, x = np.mgrid[:1800, :3600]
    car = np.sin(x * 0.01) + y * 1e-3
    h_car = fits.Header()
    for k, v in [("NAXIS", 2), ("NAXIS1", 3600), ("NAXIS2", 1800), ("CTYPE1", "GLON-CAR"),
                 ("CTYPE2", "GLAT-CAR"), ("CRVAL1", 0.0), ("CRVAL2", 0.0), ("CRPIX1", 1800.5),
                 ("CRPIX2", 900.5), ("CDELT1", -0.1), ("CDELT2", 0.1)]:
        h_car[k] = v
    other_job("CAR galactic -> TAN (ICRS)", car,
              h_car, tan((266.4, -28.9), m / 2 + 0.5, 20.0 / m, 0.0, (m, m)), m)
    y, x = np.mgrid[:4096, :4096]
    sip = ((x + 2 * y) % 97).astype(np.float32)
    h_sip = tan((150.0, 2.0), 2048.5, 5e-5, 0.0, (4096, 4096))
    h_sip["CTYPE1"], h_sip["CTYPE2"] = "RA---TAN-SIP", "DEC--TAN-SIP"
    for k, v in [("A_ORDER", 3), ("A_0_2", 2e-6), ("A_1_1", -1.5e-6), ("A_2_0", 3e-6),
                 ("A_3_0", 1e-9), ("B_ORDER", 3), ("B_0_2", -2.5e-6), ("B_1_1", 1e-6),
                 ("B_2_0", 1.2e-6), ("B_0_3", 1e-9)]:
        h_sip[k] = v
    other_job("SIP (order 3) -> TAN", sip, h_sip,
              tan((150.0, 2.0), m / 2 + 0.5, 0.2 / m, 5.0, (m, m)), m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
