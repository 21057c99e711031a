import QactdCommand
import QactlCommand

// One executable, two programs: `qactl` is a link to `qactd`, and the name it was started as
// (argv[0]'s last component) says which runs. Only that one starts: run as qactl, nothing of
// the daemon (SwiftNIO, its services, logging) is initialised.
if CommandLine.arguments.first.flatMap({ $0.split(separator: "/").last }) == "qactl" {
    QactlCommandLine.main()
} else {
    QactdCommandLine.main()
}
