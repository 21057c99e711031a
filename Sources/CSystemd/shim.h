// Only the non-variadic libsystemd entry points: Swift cannot call C variadics,
// so sd_notifyf / sd_journal_send are out and sd_notify / sd_journal_sendv are in.
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
