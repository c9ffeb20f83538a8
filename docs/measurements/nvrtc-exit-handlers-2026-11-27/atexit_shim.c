// Counts the exit handlers libnvrtc (and its builtins library) registers, by interposing
// __cxa_atexit (through which atexit and C++ static destructors register). Build and preload:
//   gcc -shared -fPIC -O1 -o atexit_shim.so atexit_shim.c -ldl
//   LD_PRELOAD=./atexit_shim.so python count_handlers.py ...
// count_handlers.py reads the count with `nvrtc_exit_handlers()`.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

static int nvrtc_handlers = 0;

int nvrtc_exit_handlers(void) { return __atomic_load_n(&nvrtc_handlers, __ATOMIC_SEQ_CST); }

int __cxa_atexit(void (*f)(void*), void* arg, void* dso) {
    static int (*real)(void (*)(void*), void*, void*) = 0;
    if (!real) real = (int (*)(void (*)(void*), void*, void*))dlsym(RTLD_NEXT, "__cxa_atexit");
    Dl_info info;
    if (dladdr(__builtin_return_address(0), &info) && info.dli_fname &&
        strstr(info.dli_fname, "libnvrtc"))
        __atomic_add_fetch(&nvrtc_handlers, 1, __ATOMIC_SEQ_CST);
    return real(f, arg, dso);
}
