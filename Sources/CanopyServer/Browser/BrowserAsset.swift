/// One file of the data browser, kept in the binary (no resource bundle, no CDN): the page works
/// wherever the `canopy` binary is copied, with no internet.
///
/// Each file's text lives in a `BrowserAsset+Name.swift` file as a raw string literal, so the
/// HTML, CSS and JavaScript stay readable and split in small modules.
struct BrowserAsset: Sendable {
    var contentType: String
    var text: String

    static let html = "text/html; charset=utf-8"
    static let css = "text/css; charset=utf-8"
    static let javaScript = "text/javascript; charset=utf-8"

    /// The files under ``BrowserRoute/prefix``, by name (`""` is the page itself).
    static let all: [String: BrowserAsset] = [
        "": BrowserAsset(contentType: html, text: indexHTML),
        "style.css": BrowserAsset(contentType: css, text: styleCSS),
        "app.js": BrowserAsset(contentType: javaScript, text: appJS),
        "api.js": BrowserAsset(contentType: javaScript, text: apiJS),
        "live.js": BrowserAsset(contentType: javaScript, text: liveJS),
        "values.js": BrowserAsset(contentType: javaScript, text: valuesJS),
        "dom.js": BrowserAsset(contentType: javaScript, text: domJS),
        "tree.js": BrowserAsset(contentType: javaScript, text: treeJS),
        "editors.js": BrowserAsset(contentType: javaScript, text: editorsJS),
        "query.js": BrowserAsset(contentType: javaScript, text: queryJS),
        "rules.js": BrowserAsset(contentType: javaScript, text: rulesJS),
    ]
}
