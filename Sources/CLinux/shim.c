#define _GNU_SOURCE 1
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CLinux.h"

const int CLinux_F_SETLEASE = F_SETLEASE;
const int CLinux_F_SETSIG = F_SETSIG;
const int CLinux_SO_PEERCRED = SO_PEERCRED;

// VarlinkNIOServer reads SO_PEERCRED into a Swift struct of three 32-bit fields.
_Static_assert(sizeof(struct ucred) == 12 && __builtin_offsetof(struct ucred, uid) == 4 && __builtin_offsetof(struct ucred, gid) == 8,
               "struct ucred is not pid, uid, gid of 32 bits each");

int CLinux_setCurrentThreadName(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

int CLinux_renameNoReplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}

int CLinux_releaseFreeHeapMemory(void) {
    return malloc_trim(0);
}

int CLinux_pidfdOpen(int pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}
