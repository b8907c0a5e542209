import ArgumentParser
import Canopy
import CanopyCore
import CanopyStorage
import Foundation

/// `canopy repair`: cuts a damaged journal at its first bad record, keeping backups.
struct Repair: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Cut a damaged journal at its first bad record, keeping a backup of what is cut.",
        discussion: """
            When a database refuses to open because a journal file is damaged before its end, \
            repair shows where the damage is and what cutting there loses, asks for confirmation, \
            then copies the damaged file to <name>.bak-<time>, truncates it at the bad record and \
            moves later journal files to backups too. The writes before the damage are kept. \
            Without a terminal it needs --yes.

            Example:
              canopy repair --db ./data
              canopy repair --db ./data --yes
            """
    )

    @Flag(help: "Cut without asking.")
    var yes = false

    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        let directory = try self.connection.localOnly("repair")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CLIError.failure("No database at \(directory).")
        }
        let lock: DirectoryLock
        do { lock = try DirectoryLock(directory: directory) } catch { throw CLIError(error) }
        var released = false
        defer { if !released { lock.release() } }
        let damage: StorageRepair.Damage
        do {
            guard let found = try StorageRepair.inspect(directory: directory) else {
                Output.line("The journal of \(directory) is intact: nothing to repair.")
                return
            }
            damage = found
        } catch {
            throw CLIError.failure(error.message + " (repair only cuts journal files; restore the checkpoint from a backup)")
        }
        let what = damage.isTornTail ? "ends with a torn record (opening cuts it off by itself)" : "is damaged"
        Output.line("\(damage.file) \(what) at offset \(damage.offset): \(damage.reason).")
        var lost = "Cutting there keeps the writes up to #\(damage.lastKeptSequence) and drops \(Progress.size(damage.bytesCut))"
        if !damage.laterFiles.isEmpty { lost += " (with the later files \(damage.laterFiles.joined(separator: ", ")))" }
        Output.line(lost + "; backups are kept.")
        if !self.yes {
            guard Output.stdinIsTerminal else {
                throw CLIError.usage("Not cutting the journal without confirmation: run repair on a terminal, or add --yes.")
            }
            Output.write("Cut the journal? [y/N] ", to: STDOUT_FILENO)
            let answer = readLine()?.lowercased() ?? ""
            guard answer == "y" || answer == "yes" else { throw CLIError.failure("Nothing was changed.") }
        }
        let stamp = Self.timestamp()
        let report: StorageRepair.Report
        do { report = try StorageRepair.repair(damage, backupSuffix: ".bak-\(stamp)") } catch { throw CLIError(error) }
        lock.release()
        released = true
        for backup in report.backups { Output.line("kept \(backup)") }
        // Prove it opens now.
        do {
            let db = try Database(path: directory)
            db.close()
        } catch {
            throw CLIError.failure("The journal was cut, but the database still does not open: \(error.message)")
        }
        Output.line("Repaired: \(directory) opens with the writes up to #\(damage.lastKeptSequence).")
    }

    static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        return String(
            format: "%04d%02d%02dT%02d%02d%02dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min,
            parts.tm_sec)
    }
}
