// The sanitizers of the kernels' host builds, shared by the test harnesses
// (tests/common/mod.rs, `HOST_KERNEL_FLAGS`) and the CUDA simulator's sanitized build
// (build.rs, `REPROJECT_RS_SANITIZE_SIM=1`): AddressSanitizer and UBSan (with
// float-cast-overflow, which `undefined` leaves out), stopping at the first finding.
// Included with `include!`, so it holds this one item.
pub const SANITIZER_FLAGS: [&str; 2] = [
    "-fsanitize=address,undefined,float-cast-overflow",
    "-fno-sanitize-recover=undefined,float-cast-overflow",
];
