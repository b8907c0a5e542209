import JWTKit

extension TokenKeys {
    /// One `-----BEGIN LABEL-----` … `-----END LABEL-----` block.
    struct PEMBlock {
        var label: String
        /// The block, re-assembled with its BEGIN and END lines.
        var text: String
    }

    /// The keys in PEM text: any number of `PUBLIC KEY` blocks (RSA of at least 2048 bits, or
    /// EC P-256) and `CERTIFICATE` blocks (X.509, whose public key is used); text between blocks
    /// is ignored. `source` names the text in errors.
    static func readPEM(_ text: String, source: String = "--jwt-keys") throws(ServerError) -> [TokenKey] {
        let blocks = try self.pemBlocks(text, source: source)
        guard !blocks.isEmpty else {
            throw ServerError(
                "\(source): found no PEM block (-----BEGIN PUBLIC KEY-----) and no JWKS document ({\"keys\": [...]}).")
        }
        var keys: [TokenKey] = []
        for (index, block) in blocks.enumerated() {
            let name = blocks.count == 1 ? "\(source): the PEM block" : "\(source): PEM block \(index + 1)"
            keys.append(TokenKey(material: try self.readPEMBlock(block, name: "\(name) (\(block.label))")))
        }
        return keys
    }

    private static func readPEMBlock(_ block: PEMBlock, name: String) throws(ServerError) -> TokenKey.Material {
        switch block.label {
        case "PUBLIC KEY", "RSA PUBLIC KEY":
            if let key = try? Insecure.RSA.PublicKey(pem: block.text) { return .rsa(key) }
            if let key = try? ES256PublicKey(pem: block.text) { return .ecdsa(key) }
            throw ServerError("\(name) is neither an RSA public key of at least 2048 bits (RS256) nor an EC P-256 one (ES256).")
        case "CERTIFICATE":
            if let key = try? Insecure.RSA.PublicKey(certificatePEM: block.text) { return .rsa(key) }
            if let key = try? ES256PublicKey(certificate: block.text) { return .ecdsa(key) }
            throw ServerError(
                "\(name) is not an X.509 certificate of an RSA key of at least 2048 bits (RS256) or of an EC P-256 key (ES256).")
        case let label where label.hasSuffix("PRIVATE KEY"):
            throw ServerError("\(name) is a private key: give the public key (openssl pkey -pubout prints it).")
        default:
            throw ServerError("\(name) is not a public key or a certificate.")
        }
    }

    /// The PEM blocks in `text`, in order.
    static func pemBlocks(_ text: String, source: String) throws(ServerError) -> [PEMBlock] {
        var blocks: [PEMBlock] = []
        var open: (label: String, lines: [Substring])?
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let line = rawLine.trimmingWhitespace()
            if let label = self.delimiterLabel(line, "BEGIN") {
                if let open { throw ServerError("\(source): PEM block \(blocks.count + 1) (\(open.label)) has no END line.") }
                open = (label, [])
            } else if let label = self.delimiterLabel(line, "END") {
                guard let block = open, block.label == label else {
                    throw ServerError("\(source): an END \(label) line without its BEGIN line (PEM block \(blocks.count + 1)).")
                }
                let body = block.lines.joined(separator: "\n")
                blocks.append(PEMBlock(label: label, text: "-----BEGIN \(label)-----\n\(body)\n-----END \(label)-----\n"))
                open = nil
            } else if open != nil, !line.isEmpty {
                open?.lines.append(line)
            }
        }
        if let open { throw ServerError("\(source): PEM block \(blocks.count + 1) (\(open.label)) has no END line.") }
        return blocks
    }

    /// `LABEL` if `line` is `-----BEGIN LABEL-----` (`kind` BEGIN) or `-----END LABEL-----`.
    private static func delimiterLabel(_ line: Substring, _ kind: String) -> String? {
        let prefix = "-----\(kind) "
        guard line.hasPrefix(prefix), line.hasSuffix("-----"), line.count >= prefix.count + 5 else { return nil }
        return String(line.dropFirst(prefix.count).dropLast(5))
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        var trimmed = self
        while trimmed.first?.isWhitespace == true { trimmed.removeFirst() }
        while trimmed.last?.isWhitespace == true { trimmed.removeLast() }
        return trimmed
    }
}
