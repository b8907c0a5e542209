/// One file of the data browser, kept in the binary (no resource bundle, no CDN): the page works
/// wherever the `canopy` binary is copied, with no internet.
///
/// The files are real ones in `Browser/Assets` (`index.html`, `style.css`, the JavaScript ES
/// modules, which import one another by their names here), excluded from the target's sources:
/// the build-tool plugin `EmbedBrowserAssets` turns them into one generated Swift file at build
/// time, ``embedded``, each file's text as it is on disk. Its file extension gives its
/// `Content-Type`; an extension the tool does not know fails the build.
struct BrowserAsset: Sendable {
    var contentType: String
    var text: String

    /// The files under ``BrowserRoute/prefix``, by name: each file of `Browser/Assets`, with
    /// `index.html` served as `""` (the page itself, `/_/`).
    static let all: [String: BrowserAsset] = {
        var all = embedded
        all[""] = all.removeValue(forKey: "index.html")
        return all
    }()
}
