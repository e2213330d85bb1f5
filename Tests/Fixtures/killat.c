/*
 * killat.so: an LD_PRELOAD library for modelcast's crash tests (built by the tests
 * with clang, which every Swift toolchain has). It kills the process with SIGKILL just before its Nth write that changes
 * what a directory target holds, so a test can stop a real run at every write:
 *
 *     KILLAT_ROOT=/abs/target KILLAT_N=3 LD_PRELOAD=killat.so modelcast publish ...
 *
 * A write is rename/renameat/renameat2 (counted by the destination), link/linkat (by
 * the new name) and unlink/unlinkat/remove (by the name removed), whose path lies
 * inside KILLAT_ROOT with no component starting with '.' (temporary files, staging
 * and the lock are not what a host serves). Nothing else is changed. Without both
 * variables the library does nothing. KILLAT_SIGNAL=INT or TERM raises that signal
 * instead of SIGKILL (the write goes ahead if the process survives it).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long seen;

/* The absolute form of `path` relative to `dirfd` (AT_FDCWD: the working directory). */
static void absolute(int dirfd, const char *path, char *out, size_t size) {
    if (path[0] == '/') {
        snprintf(out, size, "%s", path);
        return;
    }
    char base[PATH_MAX] = "";
    if (dirfd == AT_FDCWD) {
        if (!getcwd(base, sizeof base)) base[0] = 0;
    } else {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        ssize_t n = readlink(link, base, sizeof base - 1);
        base[n > 0 ? n : 0] = 0;
    }
    snprintf(out, size, "%s/%s", base, path);
}

/* Counts a write to `path` and dies before the KILLAT_N-th. */
static void before_write(int dirfd, const char *path) {
    const char *root = getenv("KILLAT_ROOT"), *n = getenv("KILLAT_N");
    if (!root || !n || !path) return;
    char full[2 * PATH_MAX];
    absolute(dirfd, path, full, sizeof full);
    size_t length = strlen(root);
    if (strncmp(full, root, length) != 0 || (full[length] != '/' && full[length] != 0)) return;
    if (strstr(full + length, "/.")) return;
    if (__atomic_add_fetch(&seen, 1, __ATOMIC_SEQ_CST) != atol(n)) return;
    /* KILLAT_SIGNAL=INT or TERM: that signal instead, raised on this thread, so the
       process's handler runs before the write (a Ctrl-C or a `kill` at exactly this point).
       A thread of a pool (libdispatch's workers) may hold the signal blocked: raise() would
       leave it pending on this thread for ever and the run would go on to the end. So the
       signal is unblocked here for the raise (the handler runs on the way out of it) and
       the thread's mask put back after. */
    const char *name = getenv("KILLAT_SIGNAL");
    int sig = name && strcmp(name, "INT") == 0 ? SIGINT : name && strcmp(name, "TERM") == 0 ? SIGTERM : SIGKILL;
    if (sig == SIGKILL) {
        kill(getpid(), SIGKILL);
        return;
    }
    sigset_t only, saved;
    sigemptyset(&only);
    sigaddset(&only, sig);
    pthread_sigmask(SIG_UNBLOCK, &only, &saved);
    raise(sig);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

#define NEXT(name) static __typeof__(name) *next; if (!next) next = dlsym(RTLD_NEXT, #name)

int rename(const char *old, const char *new) {
    NEXT(rename);
    before_write(AT_FDCWD, new);
    return next(old, new);
}

int renameat(int olddirfd, const char *old, int newdirfd, const char *new) {
    NEXT(renameat);
    before_write(newdirfd, new);
    return next(olddirfd, old, newdirfd, new);
}

int renameat2(int olddirfd, const char *old, int newdirfd, const char *new, unsigned int flags) {
    NEXT(renameat2);
    before_write(newdirfd, new);
    return next(olddirfd, old, newdirfd, new, flags);
}

int link(const char *old, const char *new) {
    NEXT(link);
    before_write(AT_FDCWD, new);
    return next(old, new);
}

int linkat(int olddirfd, const char *old, int newdirfd, const char *new, int flags) {
    NEXT(linkat);
    before_write(newdirfd, new);
    return next(olddirfd, old, newdirfd, new, flags);
}

int unlink(const char *path) {
    NEXT(unlink);
    before_write(AT_FDCWD, path);
    return next(path);
}

int unlinkat(int dirfd, const char *path, int flags) {
    NEXT(unlinkat);
    before_write(dirfd, path);
    return next(dirfd, path, flags);
}

int remove(const char *path) {
    NEXT(remove);
    before_write(AT_FDCWD, path);
    return next(path);
}
