/// The bodies of long-poll answers. The SDK loads each request as a script in a hidden frame of
/// the page; the script calls back into the page: `pLPCommand<cb>(command, …)` for the transport's
/// commands (`start` with its id and password, `close` with the number of the last batch) and
/// `pRTLPCB<cb>(number, [messages])` for each batch of messages, which the SDK puts back in order
/// by number. `cb` is the number the start request named; the script defines two short functions
/// that forward to the page's callbacks when they exist.
enum LongPollScript {
    /// The answer to a start: the new connection's id and password, then its first batch (the hello,
    /// or a redirect or a shutdown instead).
    static func start(callback: String, id: String, password: String, reply: LongPollOutbox.Reply) -> [UInt8] {
        var script = Self.prelude(callback)
        script += Array("pLPCommand('start','\(id)','\(password)');\n".utf8)
        Self.append(reply, to: &script)
        return script
    }

    /// The answer to a poll.
    static func poll(callback: String, reply: LongPollOutbox.Reply) -> [UInt8] {
        if reply == .nothing { return [] }
        var script = Self.prelude(callback)
        Self.append(reply, to: &script)
        return script
    }

    private static func prelude(_ callback: String) -> [UInt8] {
        Array(
            """
            function pLPCommand(c, a1, a2, a3, a4) {
              var f = parent.window["pLPCommand\(callback)"]; if (f) { f(c, a1, a2, a3, a4); }
            }
            function pRTLPCB(pN, data) {
              var f = parent.window["pRTLPCB\(callback)"]; if (f) { f(pN, data); }
            }

            """.utf8)
    }

    private static func append(_ reply: LongPollOutbox.Reply, to script: inout [UInt8]) {
        switch reply {
        case .nothing:
            break
        case .closed(let last?):
            script += Array("pLPCommand('close',\(last));\n".utf8)
        case .closed(nil):
            script += Array("pLPCommand('close');\n".utf8)
        case .messages(let number, let texts):
            script += Array("pRTLPCB(\(number),[".utf8)
            for (i, text) in texts.enumerated() {
                if i > 0 { script.append(UInt8(ascii: ",")) }
                Self.appendJSON(text, to: &script)
            }
            script += Array("]);\n".utf8)
        }
    }

    /// JSON text as a JavaScript expression: the same text, with U+2028 and U+2029 (allowed raw in
    /// JSON strings, not in scripts before ES2019) escaped.
    private static func appendJSON(_ text: [UInt8], to script: inout [UInt8]) {
        var i = 0
        while i < text.count {
            if text[i] == 0xE2, i + 2 < text.count, text[i + 1] == 0x80, text[i + 2] == 0xA8 || text[i + 2] == 0xA9 {
                script += Array((text[i + 2] == 0xA8 ? "\\u2028" : "\\u2029").utf8)
                i += 3
            } else {
                script.append(text[i])
                i += 1
            }
        }
    }

    /// The page of the SDK's disconnect frame: when the frame goes away (the SDK closes the
    /// session, or the page is left), it tells the server (`disconn=t`), with a beacon.
    static func disconnectFrame(id: String, password: String) -> [UInt8] {
        let target = "/.lp?disconn=t&id=\(id)&pw=\(password)"
        return Array(
            """
            <!DOCTYPE html>
            <html><body><script>
            (function () {
              var sent = false;
              function leave() {
                if (sent) { return; }
                sent = true;
                try {
                  if (navigator.sendBeacon && navigator.sendBeacon("\(target)")) { return; }
                } catch (e) {}
                try { fetch("\(target)", { method: "POST", keepalive: true }); } catch (e) {}
              }
              window.addEventListener("pagehide", leave);
              window.addEventListener("unload", leave);
            })();
            </script></body></html>

            """.utf8)
    }
}
