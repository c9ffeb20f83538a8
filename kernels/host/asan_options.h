// AddressSanitizer's options for the kernels' sanitized host builds (the test harnesses, and
// the simulator's build under REPROJECT_RS_SANITIZE_SIM=1): no leak report at exit. What the
// harnesses and the test binaries keep until they exit is no finding, and LeakSanitizer needs
// ptrace, which some sandboxes refuse. Included once per program.
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }
