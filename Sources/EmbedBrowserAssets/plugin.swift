import Foundation
import PackagePlugin

/// Embeds the data browser's files (`Browser/Assets` in the target: HTML, CSS, JavaScript) in the
/// target as one generated Swift source file, `BrowserAsset.embedded`, so the `canopy` binary
/// serves the page with no file beside it (a SwiftPM resource bundle would be a directory beside
/// the binary). The build reruns the tool when any of the files changes.
@main
struct EmbedBrowserAssets: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let assets = target.directoryURL.appending(path: "Browser/Assets")
        let names = try FileManager.default.contentsOfDirectory(atPath: assets.path(percentEncoded: false))
        let inputs = names.filter { !$0.hasPrefix(".") }.sorted().map { assets.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "BrowserAsset+Embedded.swift")
        return [
            .buildCommand(
                displayName: "Embedding the data browser's \(inputs.count) files in \(target.name)",
                executable: try context.tool(named: "canopy-embed-assets").url,
                arguments: [output.path(percentEncoded: false)] + inputs.map { $0.path(percentEncoded: false) },
                inputFiles: inputs,
                outputFiles: [output])
        ]
    }
}
