"""Instructions per pixel of a homography build into float32 outputs on the benchmark's path,
read from its machine code (no GPU): compiles kernels/ with NVRTC as the runtime does (sm_90,
--fmad=false), disassembles with nvdisasm (line info on), and walks the SASS from the entry,
taking each branch as the benchmark's launches take it (parsed parameters copied, in-range
pixels, a plain window, float32 outputs, PIXELS pixels per thread): for orders 0 and 1 from
float32 input, for the splines (RP_V_ORDER=2..5) from their float64 coefficients. Branches that no source
line decides are tried both ways (each visit of a loop's branch on its own); a path is dropped
as soon as it makes a load or store the benchmark does not. Of the paths that make the
benchmark's loads, stores and reciprocals, the shortest is reported. A rough count for
comparing two versions of the kernel on one path, not a profile. It compiles the kernel files
itself instead of using `examples/variant_cubin.rs` (which builds the checkout's embedded
sources) because it needs line info, and kernels of another revision without building that
revision.
    python3 scripts/sass_path.py KERNELS_DIR LIBNVRTC NVDISASM [PIXELS [DEFINE...]] [--lines]
PIXELS (default 4) is the build's RP_PIXELS_PER_THREAD; the defines default to the benchmark's
build, RP_V_HOMOGRAPHY RP_V_ORDER=1 RP_V_INPUT=0 RP_V_OUT=0 RP_V_NAN=0 (before session 25's
key: PIXELS 2 and the first three). The bicubic benchmark's build: PIXELS 1, RP_V_HOMOGRAPHY
RP_V_ORDER=3 RP_V_INPUT=1. `--lines` also prints the count per source line and the
path itself.
(.venv's nvidia/cuda_nvrtc/lib/libnvrtc.so.12, NVRTC 12.9; nvdisasm from the
`nvidia-cuda-nvdisasm` wheel, 13.x)
"""
import collections
import ctypes
import os
import re
import subprocess
import sys
import tempfile

LINES = "--lines" in sys.argv
ARGS = [a for a in sys.argv[1:] if a != "--lines"]
kdir, libnvrtc, nvdisasm = ARGS[:3]
PIXELS = int(ARGS[3]) if len(ARGS) > 3 else 4
DEFINES = ARGS[4:] or ["RP_V_HOMOGRAPHY", "RP_V_ORDER=1", "RP_V_INPUT=0", "RP_V_OUT=0", "RP_V_NAN=0"]
ORDER = int(next((d.split("=")[1] for d in DEFINES if d.startswith("RP_V_ORDER=")), "1"))
# The benchmark's loads of one pixel: float32 input (LDG.E), four taps for bilinear, one for
# nearest; the splines' (order + 1)^2 float64 coefficients (LDG.E.64).
SPLINE = ORDER >= 2
LOAD = "LDG.E.64" if SPLINE else "LDG.E"
TAPS = (ORDER + 1) ** 2 if SPLINE else (4 if ORDER == 1 else 1)


def compile_cubin():
    """The build's CUBIN and ptxas's report (the files through reproject.cu, with line info)."""
    src = ""
    for f in "common.cuh projections.cuh wcs.cuh interp.cuh reproject.cu".split():
        text = open(os.path.join(kdir, f)).read()
        src += f'#line 1 "{f}"\n{text}' + ("" if text.endswith("\n") else "\n")
    lib = ctypes.CDLL(libnvrtc)
    opts = ["--fmad=false", "--std=c++14", "--gpu-architecture=sm_90", "--ptxas-options=-v",
            "--generate-line-info"] + ["-D" + d for d in DEFINES]
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"reproject.cu", 0, None, None) == 0
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    n = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    log = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetProgramLog(prog, log)
    assert rc == 0, log.value.decode()
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(n))
    cubin = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetCUBIN(prog, cubin)
    return cubin.raw, log.value.decode()


def parse(sass):
    """Instructions (address, predicate, opcode, source line) and branch labels."""
    ins, labels, cur, pending = [], {}, None, []
    for line in sass.splitlines():
        m = re.match(r'\s*//## File "([^"]+)", line (\d+)', line)
        if m:
            cur = (m.group(1).split("/")[-1], int(m.group(2)))
            continue
        m = re.match(r"^(\.L_x_\d+|\$[^:]+):", line.strip())
        if m:
            pending.append(m.group(1))
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if m:
            a, text = int(m.group(1), 16), m.group(2)
            for p in pending:
                labels[p] = a
            pending = []
            pm = re.match(r"(@!?U?P[T0-9])\s+(.*)", text)
            body = pm.group(2) if pm else text
            ins.append(dict(a=a, text=text, pred=pm.group(1) if pm else None, op=body.split()[0],
                            body=body, line=cur))
    return ins, labels, {x["a"]: i for i, x in enumerate(ins)}


def walk(ins, labels, idx, rules, decided):
    """The path from the entry: (instructions, None) at its exit, or (so far, why it stopped)."""
    def target(body):
        return labels[re.search(r"`\(([^)]+)\)", body).group(1)]
    i, path, seen = 0, [], collections.Counter()
    while True:
        x = ins[i]
        seen[x["a"]] += 1
        if seen[x["a"]] > 20:
            return path, "loop"
        path.append(x)
        op, body = x["op"], x["body"]
        if not benchmark_so_far(path):
            return path, "not the benchmark's"
        key = "%s:%d" % x["line"] if x["line"] else "?"
        if op == "EXIT":
            if x["pred"] is None:
                return path, None
            take = decided.get((x["a"], seen[x["a"]]), rules.get(key))
            if take is None:
                return path, "need EXIT %x %d" % (x["a"], seen[x["a"]])
            if take:
                return path, None
            i += 1
            continue
        if op == "BRA":
            conditional = x["pred"] is not None or re.match(r"BRA\s+!?U?P\d", body)
            t = idx[target(body)]
            if not conditional:
                i = t
                continue
            take = decided.get((x["a"], seen[x["a"]]))
            # A short forward branch over a call (a slow path such as the division's) is taken.
            if take is None and 0 < t - i < 12 and any(y["op"].startswith("CALL") for y in ins[i + 1:t]):
                take = True
            if take is None:
                take = rules.get(key)
            if take is None:
                return path, "need BRA %x %d" % (x["a"], seen[x["a"]])
            i = t if take else i + 1
            continue
        if op.startswith("CALL"):
            return path, "call"
        i += 1


# Source lines whose branches the benchmark's launches decide (True: the branch is taken).
DECIDED_BY_SOURCE = {
    "if (out_f64 == RP_PARSE_PARAMS)": False, "if (sampling == 0)": True,
    "for (int i = RP_COPY_FIRST": True, "if (r >= blk_ny": False,
    "if (uc >= (unsigned)blk_nx) break;": False, "if (p->status != 0 ||": False,
    "!rp_block_coord(": False, "if (!rp_in_window(": False, "f->kind == 0)": False,
    "readable ? rp_pixel_sample": False,
}


def benchmark_so_far(path):
    """No load or store the benchmark does not make, and no NaN or byte-swap path (yet)."""
    x = path[-1]
    if x["op"] == "STG.E.64" or "DSETP.NAN" in x["op"] or "DSETP.NUM" in x["op"]:
        return False
    if "0xff00" in x["text"]:
        return False
    if SPLINE and x["op"] == "LDG.E":
        return False
    return x["op"] != LOAD or sum(y["op"] == LOAD for y in path) <= TAPS * PIXELS


def benchmark_like(path):
    ops = collections.Counter(x["op"] for x in path)
    # The homography's reciprocal once per pixel (spline builds may divide more: the weights'
    # divisions before rp_div_const).
    rcp = ops["MUFU.RCP64H"] >= PIXELS if SPLINE else ops["MUFU.RCP64H"] == PIXELS
    return (ops[LOAD] == TAPS * PIXELS and ops["STG.E"] + ops["ST.E"] == 2 * PIXELS
            and ops["STG.E.64"] == 0 and rcp
            and not any("0xff00" in x["text"] for x in path)
            and not any("DSETP.NAN" in x["op"] or "DSETP.NUM" in x["op"] for x in path))


cubin, log = compile_cubin()
regs = re.findall(r"Used (\d+) registers", log)[-1]
with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
    f.write(cubin)
    f.flush()
    sass = subprocess.run([nvdisasm, "-c", "-g", f.name], capture_output=True, text=True).stdout
ins, labels, idx = parse(sass)
rules = {}
for name in os.listdir(kdir):
    if name.endswith((".cu", ".cuh")):
        for n, text in enumerate(open(os.path.join(kdir, name)).read().splitlines(), 1):
            for pattern, take in DECIDED_BY_SOURCE.items():
                if pattern in text:
                    rules[f"{name}:{n}"] = take
paths = []


def search(decided, depth=0):
    path, why = walk(ins, labels, idx, rules, decided)
    if why is None:
        if benchmark_like(path):
            paths.append(path)
        return
    m = re.match(r"need (BRA|EXIT) ([0-9a-f]+) (\d+)", why)
    if m and depth <= 8 * PIXELS + 8:
        a = (int(m.group(2), 16), int(m.group(3)))
        for take in (True, False):
            search({**decided, a: take}, depth + 1)


search({})
assert paths, "no path makes the benchmark's loads and stores"
best = min(paths, key=lambda p: (sum(x["op"] == "F2F.F32.F64" for x in p), len(p)))
print(f"{' '.join(DEFINES)}, sm_90: {regs} registers, {len(ins)} instructions in the CUBIN; "
      f"{len(best) / PIXELS} per pixel on the benchmark's path ({len(paths)} candidate paths)")
if LINES:
    source = {}
    for name in os.listdir(kdir):
        if name.endswith((".cu", ".cuh")):
            for n, text in enumerate(open(os.path.join(kdir, name)).read().splitlines(), 1):
                source[f"{name}:{n}"] = text.strip()[:80]
    where = ["%s:%d" % x["line"] if x["line"] else "?" for x in best]
    for key, count in collections.Counter(where).most_common():
        print(f"{count:4d} {key:22s} {source.get(key, '')}")
    for x, key in zip(best, where):
        print("%05x %-22s %s" % (x["a"], key, x["text"]))
