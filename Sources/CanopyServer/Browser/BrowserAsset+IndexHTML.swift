// The data browser's index.html, served at /_/ (see BrowserAsset).
extension BrowserAsset {
    static let indexHTML = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <title>Canopy</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="/_/style.css">
        <script type="module" src="/_/app.js"></script>
        </head>
        <body>
        <header>
          <h1>Canopy</h1>
          <form id="ns-form" class="ns">
            <label for="ns">Namespace</label>
            <input id="ns" list="ns-list" placeholder="default" autocomplete="off" spellcheck="false">
            <datalist id="ns-list"></datalist>
            <button type="submit">Open</button>
          </form>
          <nav role="tablist" aria-label="Views">
            <button role="tab" data-tab="data" aria-selected="true">Data</button>
            <button role="tab" data-tab="query" aria-selected="false">Query</button>
            <button role="tab" data-tab="rules" aria-selected="false">Rules</button>
          </nav>
          <span id="status" class="status connecting" role="status">Connecting…</span>
          <button id="token-button" type="button">Token: none</button>
        </header>
        <main>
          <section id="data-panel" role="tabpanel" aria-label="Data">
            <div id="tree"></div>
          </section>
          <section id="query-panel" role="tabpanel" aria-label="Query" hidden>
            <form class="query-form">
              <label>Location <input name="path" value="/" spellcheck="false"></label>
              <label>Order by
                <select name="orderBy">
                  <option value="child">child</option>
                  <option value="$key">key</option>
                  <option value="$value">value</option>
                  <option value="$priority">priority</option>
                </select>
                <input name="child" placeholder="child path, e.g. age" spellcheck="false">
              </label>
              <label><select name="startKind" aria-label="Start"><option>startAt</option><option>startAfter</option></select>
                <input name="start" placeholder="JSON, e.g. 18 or &quot;a&quot;" spellcheck="false"></label>
              <label><select name="endKind" aria-label="End"><option>endAt</option><option>endBefore</option></select>
                <input name="end" placeholder="JSON" spellcheck="false"></label>
              <label>equalTo <input name="equalTo" placeholder="JSON" spellcheck="false"></label>
              <label><select name="limitKind" aria-label="Limit"><option>limitToFirst</option><option>limitToLast</option></select>
                <input name="limit" inputmode="numeric" placeholder="e.g. 10"></label>
              <div class="buttons">
                <button type="submit" class="primary" data-action="run-query">Run live</button>
                <button type="button" data-action="stop-query">Stop</button>
              </div>
            </form>
            <p id="query-state" class="query-state"></p>
            <code id="query-url" class="url"></code>
            <p id="query-count" class="count"></p>
            <table class="results"><thead><tr><th>#</th><th>Key</th><th>Value</th></tr></thead><tbody id="query-results"></tbody></table>
          </section>
          <section id="rules-panel" role="tabpanel" aria-label="Rules" hidden>
            <p class="hint">The security rules of this namespace (<code>/.settings/rules.json</code>). Saving checks them first: a mistake is reported with its line and column and changes nothing.</p>
            <textarea id="rules-text" rows="18" spellcheck="false" aria-label="Rules"></textarea>
            <div class="buttons">
              <button type="button" class="primary" data-action="save-rules">Save rules</button>
              <button type="button" data-action="reload-rules">Reload</button>
              <span id="rules-state" class="rules-state" role="status"></span>
            </div>
            <h2>Simulate a request</h2>
            <p class="hint">Judges a read or a write by the rules against the data as it is now, as a signed-in user or signed out. Nothing is written.</p>
            <form id="rules-test" class="rules-test">
              <label>Operation
                <select name="operation">
                  <option value="read">read</option>
                  <option value="set">set</option>
                  <option value="update">update</option>
                </select>
              </label>
              <label>Location <input name="path" value="/" spellcheck="false"></label>
              <label>As <input name="auth" placeholder="signed out, or claims: {&quot;sub&quot;: &quot;alice&quot;}" spellcheck="false" autocomplete="off"></label>
              <label class="wide">Data <textarea name="data" rows="3" spellcheck="false" placeholder="JSON written by a set; child paths and values for an update"></textarea></label>
              <label><input type="checkbox" name="draft"> the rules above, unsaved</label>
              <button type="submit" data-action="simulate">Simulate</button>
              <p id="rules-test-result" role="status"></p>
            </form>
          </section>
        </main>
        <div id="messages" aria-live="polite"></div>
        </body>
        </html>
        """#
}
