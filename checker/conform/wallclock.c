/* A process's wall clock, shifted by an offset the harness sets (WallClock, in
   checker/conform/clocks.py).

   Preloaded (LD_PRELOAD) into a Redis master, so that a clock jump on that one master is
   real: Redis compares a key's absolute expiry with its wall clock. libfaketime does this
   for the clients but cannot start Debian's redis-server (its jemalloc calls clock_gettime
   while libfaketime initialises: "unexpected recursive calls"). So this shim initialises
   nothing: every call asks the kernel directly (no dlsym, no malloc) and adds the offset,
   in milliseconds, read afresh from the file LEADERCHECK_CLOCK_FILE names (the harness
   replaces that file whole, by a rename). CLOCK_MONOTONIC and the other clocks pass as
   they are: a jump moves the wall clock only, as an NTP step or an operator would. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long offset_ms(void) {
    const char *path = getenv("LEADERCHECK_CLOCK_FILE");
    if (path == NULL) return 0;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char text[32];
    long n = (long)syscall(SYS_read, fd, text, sizeof text - 1);
    syscall(SYS_close, fd);
    if (n <= 0) return 0;
    text[n] = 0;
    return strtoll(text, NULL, 10);
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
    long done = syscall(SYS_clock_gettime, clock, ts);
    if (done == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) {
        long long ns = (long long)ts->tv_nsec + offset_ms() * 1000000LL;
        ts->tv_sec += ns / 1000000000LL;
        ts->tv_nsec = ns % 1000000000LL;
        if (ts->tv_nsec < 0) {
            ts->tv_nsec += 1000000000LL;
            ts->tv_sec -= 1;
        }
    }
    return (int)done;
}

int gettimeofday(struct timeval *tv, void *tz) {
    struct timespec ts;
    int done = clock_gettime(CLOCK_REALTIME, &ts);
    if (done == 0 && tv != NULL) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    (void)tz;
    return done;
}

time_t time(time_t *t) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (t != NULL) *t = ts.tv_sec;
    return ts.tv_sec;
}
