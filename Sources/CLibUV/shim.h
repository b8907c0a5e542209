#ifndef CANOPY_CLIBUV_SHIM_H
#define CANOPY_CLIBUV_SHIM_H
#include <uv.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/// Upcasts any libuv handle (uv_timer_t *, uv_async_t *, uv_signal_t *, ...) to uv_handle_t *,
/// which Swift cannot do implicitly.
static inline uv_handle_t *cuv_handle(void *handle) { return (uv_handle_t *)handle; }

/// Names the calling thread (Linux keeps 15 bytes). prctl is variadic and pthread_setname_np
/// needs _GNU_SOURCE, so neither is callable from Swift directly.
static inline int cuv_set_current_thread_name(const char *name) {
#ifdef __linux__
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
#else
    (void)name;
    return 0;
#endif
}

#endif
