// Linux constants that Swift's Glibc module leaves out: they are declared only under
// _GNU_SOURCE, which that module is built without. shim.c defines _GNU_SOURCE and reads
// them from the C headers, so no number is written down by hand in Swift. (Including the
// headers here instead would clash with the Glibc module's own definitions.)
#ifndef CLINUX_H
#define CLINUX_H

/// fcntl(2): take, release or test a file lease.
extern const int CLinux_F_SETLEASE;
/// fcntl(2): which signal tells the lease holder that a lease is being broken.
extern const int CLinux_F_SETSIG;
/// getsockopt(2), SOL_SOCKET: the peer's pid, uid and gid on a Unix socket.
extern const int CLinux_SO_PEERCRED;

/// pthread_setname_np(3) for the calling thread (also behind _GNU_SOURCE); 0 or an errno.
int CLinux_setCurrentThreadName(const char *name);

/// renameat2(2) with RENAME_NOREPLACE (also behind _GNU_SOURCE): renames only if `to` does not
/// exist, atomically; 0, or -1 with errno (EEXIST when it does).
int CLinux_renameNoReplace(const char *from, const char *to);

/// malloc_trim(3): hands the heap's free pages back to the kernel; 1 if some were released.
int CLinux_releaseFreeHeapMemory(void);

/// pidfd_open(2) (syscall(2) is variadic, which Swift cannot call): a descriptor, close-on-exec,
/// that becomes readable when the process exits; -1 with errno (ENOSYS before Linux 5.3).
int CLinux_pidfdOpen(int pid);

#endif
