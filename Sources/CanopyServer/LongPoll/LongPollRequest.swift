/// A request of the SDKs' long-polling transport, `/.lp?…`, read from its query parameters (the
/// SDK sends them unencoded; they are read by name, as the WebSocket's are).
enum LongPollRequest: Equatable, Sendable {
    /// `start=t&ser=…&cb=N&v=5[&ls=…][&ns=…]`: a new session; its answer is a script calling the
    /// page's `pLPCommandN` and `pRTLPCBN`.
    case start(callback: String, namespace: String?, lastSession: String?)
    /// `id=…&pw=…&ser=…[&seg<i>=…&ts<i>=…&d<i>=…]…`: a poll, carrying the client's segments if any.
    case poll(id: String, password: String, segments: [LongPollSegments.Segment])
    /// `dframe=t&id=…&pw=…`: the page of the hidden frame the SDK keeps while the session is
    /// open, which tells the server when it goes away.
    case disconnectFrame(id: String, password: String)
    /// `disconn=t&id=…&pw=…`: the client left (sent by the disconnect frame's page).
    case disconnect(id: String, password: String)

    /// Why a request is not one of the transport's: answered with 400 and this message.
    struct Invalid: Error, Equatable {
        let message: String
    }

    /// The most segments one message may have (the SDK's segments are 1,840 characters).
    static let maxSegments = 1 << 20

    init(parameters: [String: String]) throws(Invalid) {
        if parameters["start"] == "t" {
            guard let callback = parameters["cb"], (1...16).contains(callback.count), callback.allSatisfy(\.isASCIIDigit) else {
                throw Invalid(message: "A long-poll start needs a callback number cb (the SDK's script-tag callbacks).")
            }
            self = .start(callback: callback, namespace: parameters["ns"], lastSession: parameters["ls"])
            return
        }
        guard let id = parameters["id"], let password = parameters["pw"] else {
            throw Invalid(message: "A long-poll request needs start=t, or the id and pw its start answered.")
        }
        guard Self.isToken(id), Self.isToken(password) else { throw Invalid(message: "Malformed long-poll session id or pw.") }
        if parameters["disconn"] == "t" {
            self = .disconnect(id: id, password: password)
        } else if parameters["dframe"] == "t" {
            self = .disconnectFrame(id: id, password: password)
        } else {
            var segments: [LongPollSegments.Segment] = []
            var i = 0
            while let number = parameters["seg\(i)"] {
                guard let number = Int(number), (0..<(1 << 40)).contains(number),
                    let total = parameters["ts\(i)"].flatMap({ Int($0) }), (1...Self.maxSegments).contains(total),
                    let data = parameters["d\(i)"], data.allSatisfy(Self.isBase64)
                else {
                    throw Invalid(message: "Malformed long-poll segment \(i): seg\(i), ts\(i) and d\(i) are numbers and base64 text.")
                }
                segments.append(LongPollSegments.Segment(number: number, total: total, data: Substring(data)))
                i += 1
            }
            self = .poll(id: id, password: password, segments: segments)
        }
    }

    /// A session id or password as the server makes them: 1 to 64 letters and digits.
    static func isToken(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count) && text.utf8.allSatisfy { $0 < 128 && Character(Unicode.Scalar($0)).isLetterOrDigitASCII }
    }

    private static func isBase64(_ character: Character) -> Bool {
        character.isLetterOrDigitASCII || "-_.+/=".contains(character)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { self.isASCII && self.isNumber }
    fileprivate var isLetterOrDigitASCII: Bool { self.isASCII && (self.isLetter || self.isNumber) }
}
