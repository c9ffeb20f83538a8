"""The process that compiles a GPU kernel build into the on-disk cache for a process that
uses this package (``_warmup.register_compile_helper``, at import)::

    python -m reproject_rs._compile_helper --arch sm_90 [--variant "RP_V_SKY ..."]

A job whose kernel variant is not compiled yet runs the general kernel and has this process
compile the variant for the jobs after it. Being a process of its own, it finishes the build
into the cache even after the interpreter that started it has exited, which therefore never
waits for it. Exit status 0 once the build is in the cache, 1 (with the reason on stderr)
when it cannot be compiled, 2 for arguments it does not understand.
"""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m reproject_rs._compile_helper",
        description="Compile a build of reproject_rs's GPU kernels into the on-disk cache.",
    )
    parser.add_argument("--arch", required=True, help="GPU architecture, e.g. sm_90")
    parser.add_argument("--variant", help="NVRTC defines of a specialised build")
    args = parser.parse_args(argv)
    from . import _core

    try:
        print(_core.compile_kernels(args.arch, args.variant))
    except (_core.ReprojectError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
