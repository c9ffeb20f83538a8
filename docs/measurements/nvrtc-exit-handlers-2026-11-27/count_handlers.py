"""How many exit handlers NVRTC registers during each compilation of a sequence.

    LD_PRELOAD=./atexit_shim.so python count_handlers.py LIBNVRTC STEP...

STEP is `primer:ARCH` (the library's small program, `NVRTC_PRIMER` in src/gpu/cuda.rs) or
`kernels:ARCH` (the runtime's source, kernels/ in the order of `KERNEL_FILES` in
src/gpu/mod.rs, compiled as a TAN -> TAN bilinear sky variant). Prints, for each step, its
compile time and the handlers registered meanwhile.
"""
import ctypes
import os
import re
import sys
import time

nvrtc = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
count = ctypes.CDLL(None).nvrtc_exit_handlers
root = os.path.abspath(__file__).rsplit("/docs/", 1)[0]
cuda_rs = open(f"{root}/src/gpu/cuda.rs").read()
primer = re.search(r'const NVRTC_PRIMER: &str = r#"(.*?)"#;', cuda_rs, re.S).group(1)
mod_rs = open(f"{root}/src/gpu/mod.rs").read()
files = re.search(r"pub const KERNEL_FILES.*?\];", mod_rs, re.S).group(0)
kernels = "".join(
    f'#line 1 "{name}"\n' + open(f"{root}/kernels/{name}").read() + "\n"
    for name in re.findall(r'"([a-z_]+\.cuh?)"', files)
)
variant = "RP_V_SKY RP_V_PRJ_OUT=2 RP_V_PRJ_IN=2 RP_V_FRAME=0 RP_V_SIP=0 RP_V_ORDER=1 RP_V_INPUT=0"


def compile_program(source, arch, defines):
    prog = ctypes.c_void_p()
    assert nvrtc.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"reproject.cu", 0, None, None) == 0
    opts = [b"--fmad=false", b"--std=c++14", f"--gpu-architecture={arch}".encode()]
    opts += [f"-D{d}".encode() for d in defines]
    status = nvrtc.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
    assert status == 0, f"nvrtcCompileProgram: {status}"


major, minor = ctypes.c_int(), ctypes.c_int()
nvrtc.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
print(f"NVRTC {major.value}.{minor.value}: {count()} handlers registered when it was loaded")
for step in sys.argv[2:]:
    what, arch = step.split(":")
    before, t = count(), time.time()
    if what == "primer":
        compile_program(primer, arch, [])
    else:
        compile_program(kernels, arch, variant.split())
    print(f"  {what:8} {arch:7} {time.time() - t:5.2f} s, {count() - before} handlers registered")
