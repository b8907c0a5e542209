import Canopy
import CanopyCore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// Serves the Firebase Realtime Database REST protocol and its event streams.
struct CanopyResponder: HTTPResponder {
    typealias Context = CanopyRequestContext
    let state: ServerState

    func respond(to request: Request, context: Context) async throws -> Response {
        let start = ContinuousClock.now
        var request = request
        let response: Response
        do {
            response = try await self.handle(&request, context: context)
        } catch {
            response = error.response
        }
        self.state.metrics.countRequest(request.method, status: response.status)
        let logger = self.state.configuration.logger
        if logger.logLevel <= .info {
            let elapsed = ContinuousClock.now - start
            logger.info(
                "request",
                metadata: [
                    "method": "\(request.method)", "uri": "\(Self.redacted(request.uri.description))",
                    "status": "\(response.status.code)",
                    "ms": "\(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)",
                ]
            )
        }
        return response
    }

    /// The URI without the value of `auth=` / `access_token=`.
    static func redacted(_ uri: String) -> String {
        guard uri.contains("auth=") || uri.contains("access_token=") else { return uri }
        var parts = uri.split(separator: "?", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return uri }
        parts[1] = parts[1].split(separator: "&", omittingEmptySubsequences: false).map { pair in
            pair.hasPrefix("auth=") ? "auth=REDACTED" : pair.hasPrefix("access_token=") ? "access_token=REDACTED" : String(pair)
        }.joined(separator: "&")
        return parts.joined(separator: "?")
    }

    private func handle(_ request: inout Request, context: Context) async throws(RESTError) -> Response {
        if request.uri.path == "/.lp" { return await self.longPoll(request, context: context) }
        if request.uri.path == ClusterWriteRoute.path { return try await self.clusterWrite(&request) }
        if let page = BrowserRoute.response(for: request) { return page }
        let target = try RESTTarget(uri: request.uri.description)
        let identity = try await self.identify(request, target)
        var method = request.method
        if method == .post {
            if let override = request.headers[.methodOverride] ?? target.parameters["x-http-method-override"] {
                guard let m = HTTPRequest.Method(override.uppercased()), [.put, .patch, .delete, .post, .get].contains(m) else {
                    throw .badRequest("Unsupported X-HTTP-Method-Override \"\(override)\".")
                }
                method = m
            }
        }
        // The namespaces' listing names no namespace: answered before one is opened.
        if case .databases = target.kind {
            return try await self.databases(method: method, identity: identity, output: try self.output(target, request))
        }
        if case .metrics = target.kind { return try self.metrics(method: method, identity: identity) }
        let namespaceName = target.parameters["ns"].flatMap { $0.isEmpty ? nil : $0 } ?? self.state.configuration.defaultNamespace
        let namespace: Namespace
        do {
            namespace = try await self.state.store.namespace(namespaceName, create: self.state.mayCreate(namespaceName, identity: identity))
        } catch var error as RESTError {
            if let base = error.redirect { error.headers[.location] = base + request.uri.description }
            throw error
        } catch {
            throw RESTError(.serviceUnavailable, "\(error)")
        }
        let output = try self.output(target, request)

        switch target.kind {
        case .databases:  // answered above
            return try await self.databases(method: method, identity: identity, output: output)
        case .metrics:  // answered above
            return try self.metrics(method: method, identity: identity)
        case .rules:
            // On a development server everyone may set rules (to try them); else only the administrator.
            guard identity.isAdmin || !self.state.isGuarded else { throw RESTError.permissionDenied }
            return try await self.rules(&request, method: method, namespace: namespace, output: output)
        case .rulesSimulation:
            guard identity.isAdmin || !self.state.isGuarded else { throw RESTError.permissionDenied }
            return try await self.simulateRules(&request, method: method, namespace: namespace)
        case .priority(let path):
            return try await self.priority(&request, method: method, path: path, namespace: namespace, identity: identity, output: output)
        case .data(let path):
            if method != .get {
                if let name = ReadOptions.filterNames.first(where: { target.parameters[$0] != nil })
                    ?? ["shallow", "format", "aggregate"].first(where: { target.parameters[$0] != nil })
                {
                    throw .badRequest("\(name) is only supported when reading (GET); this is a \(method).")
                }
                do { try path.checkWritable() } catch { throw .badRequest(error.message) }
            }
            if (method == .patch || method == .post) && request.headers[.ifMatch] != nil {
                throw .badRequest("if-match is not supported for \(method); use it with PUT or DELETE.")
            }
            switch method {
            case .get:
                let options = try ReadOptions(target.parameters)
                if let accept = request.headers[.accept], accept.contains("text/event-stream") {
                    return try await self.stream(path: path, options: options, namespace: namespace, identity: identity, context: context)
                }
                return try await self.read(request, path: path, options: options, namespace: namespace, identity: identity, output: output)
            case .put:
                let body = try await self.body(&request)
                let value = try WriteBodies.value(body, location: path.keys, function: "set")
                return try await self.set(request, path: path, value: value, namespace: namespace, identity: identity, output: output)
            case .delete:
                return try await self.set(
                    request, path: path, value: WriteValue(node: .empty), namespace: namespace, identity: identity, output: output)
            case .post:
                let body = try await self.body(&request)
                // Validate as if written at the (20-character) push id below the location.
                let value = try WriteBodies.value(body, location: path.keys + [ChildKey("--------------------")], function: "push")
                return try await self.push(path: path, value: value, namespace: namespace, identity: identity, output: output)
            case .patch:
                let body = try await self.body(&request)
                guard let entries = try WriteBodies.update(body, location: path.keys) else {
                    return try await self.set(
                        request, path: path, value: WriteValue(node: .empty), namespace: namespace, identity: identity, output: output)
                }
                return try await self.update(path: path, entries: entries, namespace: namespace, identity: identity, output: output)
            default:
                throw RESTError(.methodNotAllowed, "Method \(method) is not supported; use GET, PUT, POST, PATCH or DELETE.")
            }
        }
    }

    struct Output {
        var silent: Bool
        var pretty: Bool
        var wantsETag: Bool
    }

    /// How the response is written (`print=`, `X-Firebase-ETag`).
    private func output(_ target: RESTTarget, _ request: Request) throws(RESTError) -> Output {
        let silent: Bool
        let pretty: Bool
        switch target.parameters["print"] {
        case nil, "":
            silent = false
            pretty = false
        case "silent":
            silent = true
            pretty = false
        case "pretty":
            silent = false
            pretty = true
        case let other?: throw .badRequest("print must be \"pretty\" or \"silent\", not \"\(other)\".")
        }
        return Output(silent: silent, pretty: pretty, wantsETag: request.headers[.firebaseETag]?.lowercased() == "true")
    }

    // MARK: - Access

    /// Who the request acts as: the credential of `Authorization: Bearer`, `auth=` or
    /// `access_token=`. On a guarded server a credential that proves nothing is refused (401)
    /// rather than treated as none.
    private func identify(_ request: Request, _ target: RESTTarget) async throws(RESTError) -> Identity {
        var presented: String?
        if let header = request.headers[.authorization] {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { presented = String(parts[1]) }
        }
        presented = presented ?? target.parameters["auth"] ?? target.parameters["access_token"]
        switch await self.state.identify(presented) {
        case .success(let identity): return identity
        case .failure where !self.state.isGuarded:
            // A development server verifies no tokens (as before rules existed, REST clients may
            // send any): the request is anonymous, judged by the namespace's rules.
            return .anonymous
        case .failure(let rejection): throw RESTError(.unauthorized, rejection.message)
        }
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var diff = UInt8(x.count == y.count ? 0 : 1)
        for i in 0..<max(x.count, y.count) {
            diff |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0)
        }
        return diff == 0
    }

    // MARK: - Bodies

    /// The request's body, at most `limit` bytes (the server's `maxBodyBytes` by default).
    func body(_ request: inout Request, limit: Int? = nil) async throws(RESTError) -> [UInt8] {
        let limit = limit ?? self.state.configuration.maxBodyBytes
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw RESTError(.contentTooLarge, "Payload too large: the limit is \(limit) bytes.")
        }
        do {
            let buffer = try await request.collectBody(upTo: limit)
            return Array(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            throw RESTError(.contentTooLarge, "Payload too large: the limit is \(limit) bytes.")
        } catch {
            throw .badRequest("Could not read the request body: \(error)")
        }
    }
}
