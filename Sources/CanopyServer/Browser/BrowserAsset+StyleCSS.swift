// The data browser's style.css, served at /_/style.css (see BrowserAsset).
extension BrowserAsset {
    static let styleCSS = #"""
        /* The data browser: system fonts, the user's light or dark preference. */
        :root {
          color-scheme: light dark;
          --bg: #ffffff; --fg: #1d2026; --muted: #6a717d; --line: #e3e6ea; --panel: #f6f7f9;
          --accent: #1a73e8; --key: #8a3ffc; --string: #0b7a3e; --number: #b5530b; --boolean: #0a62c9; --null: #8a8f98;
          --changed: #fff3b0; --removed: #ffd6d6; --error: #c5221f; --error-bg: #fdecea; --ok: #137333;
        }
        @media (prefers-color-scheme: dark) {
          :root {
            --bg: #16181c; --fg: #e6e8eb; --muted: #9aa1ab; --line: #2c3036; --panel: #1e2126;
            --accent: #8ab4f8; --key: #c6a0ff; --string: #7ee2a8; --number: #ffb374; --boolean: #8ab4f8; --null: #9aa1ab;
            --changed: #5c4d00; --removed: #6b1f1f; --error: #f28b82; --error-bg: #3c1f1f; --ok: #81c995;
          }
        }
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--bg); color: var(--fg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
        button, input, select, textarea { font: inherit; color: inherit; }
        input, select, textarea { background: var(--bg); border: 1px solid var(--line); border-radius: 4px; padding: 3px 6px; }
        textarea { font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; font-size: 13px; width: 100%; }
        button, a.button { background: var(--panel); border: 1px solid var(--line); border-radius: 4px; padding: 3px 10px; cursor: pointer; text-decoration: none; }
        button:disabled { opacity: .45; cursor: default; }
        button.primary { background: var(--accent); border-color: var(--accent); color: var(--bg); }
        button.link { background: none; border: none; color: var(--accent); padding: 0 4px; }
        code, .key, .value, .summary { font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; font-size: 13px; }

        header { display: flex; align-items: center; gap: 16px; padding: 8px 16px; border-bottom: 1px solid var(--line); background: var(--panel); flex-wrap: wrap; }
        header h1 { font-size: 17px; margin: 0; }
        .ns { display: flex; gap: 6px; align-items: center; }
        .ns input { width: 12em; }
        nav { display: flex; gap: 4px; }
        [role="tab"] { border: none; background: none; padding: 4px 10px; border-bottom: 2px solid transparent; border-radius: 0; }
        [role="tab"][aria-selected="true"] { border-bottom-color: var(--accent); color: var(--accent); }
        .status { margin-left: auto; font-size: 12px; padding: 2px 8px; border-radius: 10px; background: var(--line); }
        .status.live { background: var(--ok); color: var(--bg); }
        .status.offline, .status.denied, .status.error { background: var(--error); color: var(--bg); }
        main { padding: 12px 16px 80px; }

        /* The tree */
        .tree, .children { list-style: none; margin: 0; padding: 0; }
        .children { padding-left: 18px; border-left: 1px dotted var(--line); margin-left: 9px; }
        .row { display: flex; align-items: baseline; gap: 8px; padding: 1px 4px; border-radius: 3px; min-height: 24px; }
        .row:hover { background: var(--panel); }
        .toggle { width: 18px; padding: 0; border: none; background: none; color: var(--muted); }
        .key { color: var(--key); }
        .row .key::after { content: ":"; color: var(--muted); }
        .summary { color: var(--muted); }
        .value { cursor: text; white-space: pre-wrap; word-break: break-all; }
        .type-string { color: var(--string); }
        .type-number { color: var(--number); }
        .type-boolean { color: var(--boolean); }
        .type-null { color: var(--null); }
        .actions { margin-left: auto; display: flex; gap: 2px; opacity: .35; }
        .row:hover .actions, .row:focus-within .actions { opacity: 1; }
        .action { border: none; background: none; padding: 0 5px; color: var(--muted); }
        .action:hover { color: var(--accent); }
        .action[data-action="delete"]:hover { color: var(--error); }
        .notice, .loading, .empty { color: var(--muted); font-style: italic; padding: 2px 4px; }
        .notice.offline, .notice.error, .notice.denied { color: var(--error); font-style: normal; }
        .pager { display: flex; align-items: center; gap: 6px; padding: 4px; color: var(--muted); }
        .pager .jump { width: 9em; }
        .flash-changed { animation: changed 2s ease-out; }
        .flash-removed { animation: removed 2s ease-out; }
        @keyframes changed { from { background: var(--changed); } to { background: transparent; } }
        @keyframes removed { from { background: var(--removed); } to { background: transparent; } }

        .editor { display: flex; flex-wrap: wrap; gap: 6px; align-items: flex-start; margin: 2px 0 6px 26px; padding: 6px; border: 1px solid var(--line); border-radius: 4px; background: var(--panel); }
        .editor input[data-field="text"] { min-width: 16em; }
        .editor textarea { min-width: 24em; width: auto; flex: 1; }
        .editor-title { font-weight: 600; }
        .editor-error, .dialog-error { color: var(--error); width: 100%; margin: 0; }

        /* Dialogs and messages */
        dialog.modal { border: 1px solid var(--line); border-radius: 8px; background: var(--bg); color: var(--fg); min-width: min(560px, 90vw); }
        dialog.modal h2 { margin-top: 0; font-size: 16px; }
        dialog::backdrop { background: rgb(0 0 0 / 40%); }
        .dialog-body { display: flex; flex-direction: column; gap: 8px; }
        .buttons { display: flex; gap: 8px; justify-content: flex-end; align-items: center; margin-top: 10px; }
        .hint { color: var(--muted); font-size: 13px; }
        #messages { position: fixed; bottom: 12px; right: 12px; display: flex; flex-direction: column; gap: 6px; max-width: 480px; z-index: 10; }
        .message { padding: 8px 12px; border-radius: 6px; border: 1px solid var(--line); background: var(--panel); display: flex; gap: 8px; align-items: flex-start; }
        .message.error { background: var(--error-bg); color: var(--error); border-color: var(--error); }
        .message .close { margin-left: auto; border: none; background: none; padding: 0 4px; }

        /* Query and rules */
        .query-form { display: flex; flex-wrap: wrap; gap: 10px 18px; align-items: center; }
        .query-form label { display: flex; gap: 6px; align-items: center; }
        .query-form .buttons { margin: 0; }
        .query-state.error, .rules-state.error, .denied { color: var(--error); }
        .query-state.live, .rules-state.ok, .allowed { color: var(--ok); }
        .url { display: block; color: var(--muted); word-break: break-all; margin: 6px 0; }
        .results { border-collapse: collapse; width: 100%; }
        .results th, .results td { text-align: left; border-bottom: 1px solid var(--line); padding: 3px 8px; vertical-align: top; }
        .results .index { color: var(--muted); width: 3em; }
        .results .value { font-family: ui-monospace, Menlo, Consolas, monospace; }
        #rules-text { min-height: 18em; }
        .rules-test { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; }
        .rules-test label { display: flex; gap: 6px; align-items: center; }
        .rules-test input[name="auth"] { width: 22em; }
        .rules-test .wide { width: 100%; align-items: flex-start; }
        .rules-test .wide textarea { flex: 1; }
        .rules-test p { width: 100%; margin: 4px 0; }
        """#
}
