// TURNOUT_THREAD_LOCAL: the thread-locals the call path reads (the key sets,
// the reader's CallSection state, the profiler's buffer, grad mode, the
// allocator's cache), declared and defined with it in place of
// `thread_local`:
//
//   // header                                     // one .cc file
//   extern TURNOUT_THREAD_LOCAL Raw raw_state;    TURNOUT_THREAD_LOCAL Raw raw_state = {};
//
// It makes each access one %fs-relative load, from the runtime itself and
// from every program or library that inlines turnout's headers:
// - the initial-exec TLS model. Position-independent code (libturnout.so,
//   turnout._C, users' libraries) otherwise reaches a thread-local through
//   a call to __tls_get_addr, a few nanoseconds a call. The price: the
//   runtime's thread-locals (a few hundred bytes) live in the static TLS
//   block, which glibc sizes at start-up with a surplus for libraries
//   dlopened later (this is how `import turnout` loads it); tests/runtime
//   checks that the block stays small.
// - constant initialisation (C++20's constinit, as a GCC or Clang extension
//   in C++17): the variable must be initialised without code, and code that
//   only sees the declaration skips the check for a thread-local
//   initialisation function.
#ifndef TURNOUT_DISPATCHER_CORE_THREAD_LOCAL_H_
#define TURNOUT_DISPATCHER_CORE_THREAD_LOCAL_H_

#if defined(__clang__)
// The GNU spelling: a [[...]] attribute may not follow the __attribute__ of
// TURNOUT_THREAD_LOCAL after `extern`, which clang rejects.
#define TURNOUT_CONSTINIT __attribute__((require_constant_initialization))
#elif defined(__GNUC__) && __GNUC__ >= 10
#define TURNOUT_CONSTINIT __constinit
#else
#define TURNOUT_CONSTINIT
#endif

#define TURNOUT_THREAD_LOCAL \
  __attribute__((tls_model("initial-exec"))) TURNOUT_CONSTINIT thread_local

#endif  // TURNOUT_DISPATCHER_CORE_THREAD_LOCAL_H_
