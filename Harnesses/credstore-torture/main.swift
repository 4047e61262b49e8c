// credstore-torture: the harnesses behind docs/reliability.md.
//
//   credstore-torture faults --credstore PATH [--kills N] [--seed S] [--dir D] [--bundle-items N] [--keep 1]
//       SIGKILLs writer processes, and `credstore rekey`, `credstore passwd`, `credstore import` of a
//       large bundle and an open that migrates an old-schema store, at random moments; after each
//       kill every acknowledged write must be there and `credstore verify` and verify() must pass.
//   credstore-torture load [--seconds S] [--processes 8] [--threads 2] [--seed S] [--dir D]
//       8 processes × 2 threads of mixed reads and writes on one store; any error (SQLITE_BUSY
//       included) or read that disagrees with the reader's own writes is a failure.
//   credstore-torture corrupt [--trials N] [--seed S] [--dir D] [--keep 1] [--reuse 1 --trial I]
//       random byte flips and truncations of the database, WAL, SHM or key file of a small store
//       (copied while a connection was open, so the WAL holds the latest commits); each trial runs
//       in a child process, and its open and reads must give the right data or a corrupt /
//       tamperDetected / wrongKey error. A silent return of an earlier committed state is reported
//       as stale-rollback, any other wrong data as wrong-answer; both fail the run. --keep 1 keeps
//       the template, and --reuse 1 --trial I replays one trial on it byte for byte.
//
// Internal subcommands (children): writer, open, load-worker, corrupt-trial.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else {
    fail("usage: credstore-torture faults|load|corrupt [options]  (see the comment at the top of main.swift)")
}
let rest = Array(arguments.dropFirst())
switch command {
case "faults":
    exit(faultsMain(Options(rest[...])))
case "load":
    exit(loadMain(Options(rest[...])))
case "corrupt":
    exit(corruptMain(Options(rest[...])))
case "writer":
    writerMain(rest)
case "open":
    openMain(rest)
case "load-worker":
    loadWorkerMain(rest)
case "corrupt-trial":
    corruptTrialMain(rest)
default:
    fail("unknown subcommand \(command); use faults, load or corrupt")
}
