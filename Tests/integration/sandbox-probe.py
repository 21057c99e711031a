#!/usr/bin/python3
"""Checks, from inside a service, that each sandboxing setting of qactd's unit is in force.

Tests/integration/systemd-user-manager.sh runs it as an ExecStartPre= of qactd.service (a
drop-in), so it gets exactly the daemon's sandbox. Each check does something the setting
forbids and that would succeed without it, and prints one line to stdout (the journal):
"sandbox-probe: SETTING: ok (what happened)", "sandbox-probe: SETTING: FAIL (...)" or, where
this machine cannot tell, "sandbox-probe: SETTING: not checked (why)". It exits 1 when any
check failed, so the service does not start.
    sandbox-probe.py HOME RUNTIME_DIR WORLD_WRITABLE_FOLDER
"""
import ctypes
import ctypes.util
import errno
import mmap
import os
import platform
import resource
import signal
import socket
import subprocess
import sys

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
failures = 0


def report(setting, ok, detail):
    global failures
    failures += 0 if ok else 1
    print(f"sandbox-probe: {setting}: {'ok' if ok else 'FAIL'} ({detail})", flush=True)


def not_checked(setting, why):
    print(f"sandbox-probe: {setting}: not checked ({why})", flush=True)


def error_name(number):
    return errno.errorcode.get(number, str(number))


def refused(setting, action, wanted):
    """Runs action (which raises OSError when refused); ok only when it failed with errno `wanted`."""
    try:
        action()
    except OSError as error:
        report(setting, error.errno == wanted, f"refused with {error_name(error.errno)}, expected {error_name(wanted)}")
        return
    report(setting, False, f"allowed, expected {error_name(wanted)}")


def libc_call(name, *arguments):
    def call():
        result = getattr(libc, name)(*arguments)
        if result == -1:
            number = ctypes.get_errno()
            raise OSError(number, os.strerror(number))
    return call


def create_file(path):
    def create():
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(descriptor)
        os.unlink(path)
    return create


def writable(setting, folder):
    try:
        create_file(os.path.join(folder, ".sandbox-probe"))()
        report(setting, True, f"wrote in {folder}")
    except OSError as error:
        report(setting, False, f"cannot write in {folder}: {error_name(error.errno)}")


def read_only_mount(setting, path):
    flags = os.statvfs(path).f_flag
    report(setting, bool(flags & os.ST_RDONLY), f"{path} is mounted {'read-only' if flags & os.ST_RDONLY else 'read-write'}")


def main():
    home, runtime, open_folder = sys.argv[1:4]
    uid = os.getuid()

    with open("/proc/self/uid_map") as f:
        mapping = [line.split() for line in f.read().splitlines()]
    report("PrivateUsers=yes", mapping == [[str(uid), str(uid), "1"]], f"uid_map {mapping}")

    with open("/proc/self/status") as f:
        status = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
    report("NoNewPrivileges=yes", status.get("NoNewPrivs", "").strip() == "1", f"NoNewPrivs {status.get('NoNewPrivs', '').strip()}")

    # A folder anyone may write in (the test mounts one), outside /home, /run and /tmp.
    refused("ProtectSystem=strict", create_file(os.path.join(open_folder, ".sandbox-probe")), errno.EROFS)
    refused("ProtectHome=read-only", create_file(os.path.join(home, ".sandbox-probe")), errno.EROFS)
    refused("ProtectHome=read-only (runtime folder)", create_file(os.path.join(runtime, ".sandbox-probe")), errno.EROFS)
    for folder in (f"{home}/.local/state/qactd", f"{home}/.local/share/qactd", f"{runtime}/qactd",
                   f"{home}/.config/qactd", f"{home}/.local/share/applications"):
        writable("ReadWritePaths=", folder)

    # PrivateTmp=yes: a /tmp of the service's own, writable under ProtectSystem=strict; the
    # test checks that this file is not in the manager's /tmp.
    try:
        with open("/tmp/qactd-sandbox-probe", "w") as f:
            f.write(str(os.getpid()))
    except OSError as error:
        report("PrivateTmp=yes", False, f"cannot write in /tmp: {error_name(error.errno)}")

    read_only_mount("ProtectKernelTunables=yes", "/proc/sys")
    read_only_mount("ProtectControlGroups=yes", "/sys/fs/cgroup")

    refused("RestrictAddressFamilies=AF_UNIX", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close(), errno.EAFNOSUPPORT)
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()


    # A 32-bit system call (int 0x80, getpid) from this 64-bit process, in a child of its own:
    # where 32-bit calls are let through it prints its pid twice; the seccomp filter of
    # SystemCallArchitectures=native kills it with SIGSYS instead.
    if platform.machine() == "x86_64":
        child = subprocess.run([sys.executable, "-c", """
import ctypes, mmap, os
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(b"\\xb8\\x14\\x00\\x00\\x00\\xcd\\x80\\xc3")  # mov eax, 20 (getpid); int 0x80; ret
print(os.getpid(), flush=True)
print(ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))())
"""], capture_output=True, text=True)
        report("SystemCallArchitectures=native", child.returncode == -signal.SIGSYS,
               f"a 32-bit getpid ended with status {child.returncode}, output {child.stdout.split()}, expected SIGSYS")
    else:
        not_checked("SystemCallArchitectures=native", f"no 32-bit system call to try on {platform.machine()}")

    # Where the test could give its manager RLIMIT_RTPRIO 1, only RestrictRealtime= refuses this.
    soft, _ = resource.getrlimit(resource.RLIMIT_RTPRIO)
    if soft < 1:
        not_checked("RestrictRealtime=yes", f"RLIMIT_RTPRIO is {soft}, so the kernel refuses real-time scheduling anyway")
    else:
        class SchedParam(ctypes.Structure):
            _fields_ = [("priority", ctypes.c_int)]
        SCHED_RR = 2
        refused("RestrictRealtime=yes", libc_call("sched_setscheduler", 0, SCHED_RR, ctypes.byref(SchedParam(1))), errno.EPERM)

    own = f"{home}/.local/state/qactd/.sandbox-probe-suid"
    with open(own, "w"):
        pass
    try:
        refused("RestrictSUIDSGID=yes", lambda: os.chmod(own, 0o4700), errno.EPERM)
    finally:
        os.unlink(own)

    CLONE_NEWUSER = 0x10000000
    refused("RestrictNamespaces=yes", libc_call("unshare", CLONE_NEWUSER), errno.EPERM)

    # adjtimex with no mode set only reads the clock's state: allowed to anyone, but in @clock,
    # which @system-service leaves out; SystemCallErrorNumber=EPERM makes it fail rather than kill.
    timex = ctypes.create_string_buffer(256)
    refused("SystemCallFilter=@system-service, SystemCallErrorNumber=EPERM", libc_call("adjtimex", timex), errno.EPERM)

    # Last: where it is let through, it changes this process's personality.
    PER_LINUX32 = 0x0008
    refused("LockPersonality=yes", libc_call("personality", ctypes.c_ulong(PER_LINUX32)), errno.EPERM)

    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
