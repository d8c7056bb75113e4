// Preloaded by the cli.hostile.thread_start_fails test: every thread start fails, as it
// does when a process reaches its thread limit.
#include <pthread.h>

#include <cerrno>

extern "C" int pthread_create(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*) { return EAGAIN; }
