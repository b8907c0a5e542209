import ArgumentParser
import CanopyCluster
import CanopyCore
import Foundation
import Logging

/// `canopy cluster`: a cluster's state in its PostgreSQL (the DocC article *Cluster*).
struct ClusterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Show a cluster's nodes and namespaces, or move a namespace to another node.",
        subcommands: [ClusterStatusCommand.self, ClusterMoveCommand.self]
    )
}

/// Where the cluster's PostgreSQL is.
struct ClusterOptions: ParsableArguments {
    @Option(
        name: .customLong("cluster"),
        help: ArgumentHelp(
            "The cluster's PostgreSQL (the password from --cluster-password-file, the URL or PGPASSWORD).",
            valueName: "postgres://USER@HOST:PORT/DB"))
    var url: String

    @Option(
        name: .customLong("cluster-password-file"),
        help: ArgumentHelp("A file holding the PostgreSQL password (one line).", valueName: "file"))
    var passwordFile: String?

    /// Connects to the cluster's PostgreSQL.
    func connect() async throws -> ClusterStore {
        let configuration = try Self.configuration(url: self.url, passwordFile: self.passwordFile)
        do {
            var logger = Logger(label: "canopy.cluster")
            logger.logLevel = .critical
            return try await ClusterStore.connect(configuration, logger: logger)
        } catch {
            throw CLIError(error)
        }
    }

    /// The cluster at `url`, its password read from `passwordFile` when given.
    static func configuration(url: String, passwordFile: String?) throws -> ClusterConfiguration {
        var password: String?
        if let path = passwordFile {
            guard let text = String(validating: try readOptionFile(path, option: "--cluster-password-file"), as: UTF8.self) else {
                throw CLIError.usage("--cluster-password-file \(path): not UTF-8 text.")
            }
            password = text.trimmingCharacters(in: .newlines)
        }
        do {
            return try ClusterConfiguration(url: url, password: password)
        } catch {
            throw CLIError(error)
        }
    }
}

/// `canopy cluster status`.
struct ClusterStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "List the cluster's nodes and namespaces: leaders, epochs, log positions and checkpoint ages.",
        discussion: """
            Examples:
              canopy cluster status --cluster postgres://canopy@db.internal:5432/canopy --cluster-password-file pg-password
              canopy cluster status --cluster postgres://canopy@127.0.0.1:5432/canopy --json
            """
    )

    @OptionGroup var cluster: ClusterOptions

    @Flag(help: "Print the status as one JSON object.")
    var json = false

    func run() async throws {
        let store = try await self.cluster.connect()
        let status: ClusterStatus
        do {
            status = try await store.status()
        } catch {
            await store.close()
            throw CLIError(error)
        }
        await store.close()
        if self.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            Output.line(String(decoding: try encoder.encode(status), as: UTF8.self))
            return
        }
        Output.line("nodes (\(status.nodes.count))")
        for node in status.nodes {
            let lease = node.leaseSeconds >= 0 ? String(format: "lease %.1f s", node.leaseSeconds) : "lease ran out"
            Output.line(
                "  #\(node.id)  \(node.advertise)  \(node.alive ? "alive" : "dead")  \(lease)  up \(Self.age(node.uptimeSeconds))  \(node.version)"
            )
        }
        Output.line("namespaces (\(status.namespaces.count))")
        for namespace in status.namespaces {
            let leader =
                namespace.leader.map { "#\($0) \(namespace.leaderAdvertise ?? "")\(namespace.leaderAlive ? "" : " (dead)")" } ?? "no leader"
            let checkpoint =
                namespace.checkpointAgeSeconds.map { "checkpoint #\(namespace.checkpoint), \(Self.age($0)) old" } ?? "no checkpoint"
            Output.line(
                "  \(namespace.name)  leader \(leader)  epoch \(namespace.epoch)  head #\(namespace.head)  \(checkpoint)  \(namespace.logRecords) records after it"
            )
            for follower in namespace.followers {
                let lag = max(0, namespace.head - follower.applied)
                Output.line(
                    "    follower #\(follower.node)  applied #\(follower.applied)  \(lag) behind  reported \(Self.age(follower.ageSeconds)) ago"
                )
            }
        }
    }

    static func age(_ seconds: Double) -> String {
        if seconds < 120 { return String(format: "%.0f s", seconds) }
        if seconds < 7200 { return String(format: "%.0f min", seconds / 60) }
        return String(format: "%.1f h", seconds / 3600)
    }
}

/// `canopy cluster move`.
struct ClusterMoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Hand a namespace to another live node (its current leader's next write is refused and it steps down).",
        discussion: """
            Examples:
              canopy cluster move blog --to 3 --cluster postgres://canopy@db.internal:5432/canopy
            """
    )

    @Argument(help: ArgumentHelp("The namespace to move.", valueName: "namespace"))
    var namespace: String

    @Option(help: ArgumentHelp("The id of the node to lead it (canopy cluster status lists them).", valueName: "node"))
    var to: Int32

    @OptionGroup var cluster: ClusterOptions

    func run() async throws {
        let store = try await self.cluster.connect()
        do {
            let lease = try await store.move(self.namespace, to: self.to)
            await store.close()
            Output.line("\(self.namespace): led by node #\(lease.node) from epoch \(lease.epoch)")
        } catch {
            await store.close()
            throw CLIError(error)
        }
    }
}
