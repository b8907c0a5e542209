"""The data browser (`canopy serve`'s page at /_/) in a real, headless Chromium driven by Selenium.

    browser_interop.py --url http://127.0.0.1:P --guarded-url http://127.0.0.1:Q --token T --artifacts DIR

`--url` is a development server (no auth), `--guarded-url` one started with `--auth-token T`
(with `--guarded-small-buffer`: and a largest answer under 1 MB, too small for /big's 100,000 children).
The script seeds data over REST, drives the page (expand, edit, add, push, delete, import,
export, query, paging through 100,000 children, rules; the row actions by keyboard, links to a
location and navigation in the page's address), checks every change over REST, sees
REST writes appear live, cuts the connection (a proxy between the browser and the server) and
sees the page reconnect. Screenshots of the main views go to DIR. Prints
"browser: all checks passed" when done; any failure raises.
"""

import argparse
import json
import os
import shutil
import socket
import sys
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request

try:
    from selenium import webdriver
    from selenium.common.exceptions import (
        ElementClickInterceptedException,
        ElementNotInteractableException,
        NoSuchElementException,
        StaleElementReferenceException,
    )
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError as error:  # CI installs it into the interop venv
    print(f"browser: selenium is not installed: {error}")
    sys.exit(2)

NS = "browser"
BIG = 100_000
TRANSIENT = (
    StaleElementReferenceException,
    NoSuchElementException,
    ElementClickInterceptedException,
    ElementNotInteractableException,
)


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print(f"ok: {what}", flush=True)


# MARK: - REST (what curl would do)


def rest(base, method, path, body=None, token=None, params="", ns=NS):
    url = f"{base}{path}.json?ns={ns}{params}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
            return response.status, (json.loads(text) if text else None)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read().decode() or "null")


def rest_get(base, path, token=None, params=""):
    status, value = rest(base, "GET", path, token=token, params=params)
    assert status == 200, f"GET {path}: {status} {value}"
    return value


def rest_put(base, path, value, token=None):
    status, body = rest(base, "PUT", path, value, token=token)
    assert status == 200, f"PUT {path}: {status} {body}"


# MARK: - A proxy that can cut the browser off the server ("server gone")


class Proxy:
    """Forwards 127.0.0.1:port to the server; `cut()` drops every connection and refuses new ones."""

    def __init__(self, target_port):
        self.target_port = target_port
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self.connections = []
        self.lock = threading.Lock()
        self.listener = None

    def start(self):
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.listener = listener
        threading.Thread(target=self.accept, args=(listener,), daemon=True).start()

    def accept(self, listener):
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self.lock:
                self.connections += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self.pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def pipe(source, destination):
        try:
            while chunk := source.recv(65536):
                destination.sendall(chunk)
        except OSError:
            pass
        for s in (source, destination):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        # shutdown() wakes the thread blocked in accept() (close() alone leaves the port listening).
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        with self.lock:
            connections, self.connections = self.connections, []
        for s in connections:
            try:
                s.shutdown(socket.SHUT_RDWR)
                s.close()
            except OSError:
                pass


# MARK: - The browser


class Page:
    def __init__(self, artifacts):
        options = Options()
        options.binary_location = os.environ.get("CANOPY_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
        self.profile = tempfile.mkdtemp(prefix="canopy-chromium-")
        for argument in (
            "--headless=new",
            "--no-sandbox",
            "--disable-dev-shm-usage",
            "--disable-gpu",
            "--window-size=1280,860",
            "--force-device-scale-factor=1",
            f"--user-data-dir={self.profile}",
        ):
            options.add_argument(argument)
        driver_path = os.environ.get("CANOPY_CHROMEDRIVER") or shutil.which("chromedriver") or "/usr/bin/chromedriver"
        self.driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
        self.artifacts = artifacts
        os.makedirs(artifacts, exist_ok=True)

    def close(self):
        self.driver.quit()
        shutil.rmtree(self.profile, ignore_errors=True)

    def wait(self, condition, what, timeout=30):
        return WebDriverWait(self.driver, timeout, ignored_exceptions=TRANSIENT).until(
            lambda d: condition(), f"timed out waiting for {what}"
        )

    def js(self, script, *arguments):
        return self.driver.execute_script(script, *arguments)

    def text(self, css):
        return self.js("const e = document.querySelector(arguments[0]); return e ? e.textContent : null;", css)

    def exists(self, css):
        return self.js("return document.querySelector(arguments[0]) !== null;", css)

    def click(self, css):
        def attempt():
            self.driver.find_element(By.CSS_SELECTOR, css).click()
            return True

        self.wait(attempt, f"a clickable {css}")

    def type(self, css, text):
        def attempt():
            field = self.driver.find_element(By.CSS_SELECTOR, css)
            field.clear()
            field.send_keys(text)
            return field.get_attribute("value") == text

        self.wait(attempt, f"typing into {css}")

    def press_enter(self, css):
        def attempt():
            self.driver.find_element(By.CSS_SELECTOR, css).send_keys(Keys.ENTER)
            return True

        self.wait(attempt, f"Enter in {css}")

    def select(self, css, value):
        def attempt():
            Select(self.driver.find_element(By.CSS_SELECTOR, css)).select_by_value(value)
            return True

        self.wait(attempt, f"choosing {value} in {css}")

    def screenshot(self, name):
        # Without the passing "Saved"/"Deleted" notes of earlier steps.
        self.js("document.querySelectorAll('#messages .message.info').forEach(m => m.remove())")
        path = os.path.join(self.artifacts, name)
        self.driver.save_screenshot(path)
        print(f"screenshot: {path}", flush=True)

    def dark(self, on):
        features = [{"name": "prefers-color-scheme", "value": "dark" if on else "light"}]
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": features})

    # The tree

    @staticmethod
    def node(path):
        return f'li[data-path="{path}"]'

    def row_action(self, path, action):
        return f'{self.node(path)} > .row [data-action="{action}"]'

    def value(self, path):
        return self.text(f"{self.node(path)} > .row .value")

    def wait_value(self, path, shown):
        self.wait(lambda: self.value(path) == shown, f"{path} to show {shown}")

    def wait_node(self, path, present=True):
        self.wait(lambda: self.exists(self.node(path)) == present, f"{path} to be {'shown' if present else 'gone'}")

    def expand(self, path):
        self.wait_node(path)
        if not self.exists(f"{self.node(path)}.open"):
            self.click(self.row_action(path, "toggle"))
        self.wait(lambda: self.exists(f"{self.node(path)}.open"), f"{path} to open")

    def editor_save(self, text=None, type_=None, key=None):
        self.wait(lambda: self.exists("form.editor"), "the editor")
        if key is not None:
            self.type('form.editor [data-field="key"]', key)
        if type_ is not None:
            self.select('form.editor select[data-field="type"]', type_)
        if text is not None:
            self.type('form.editor [data-field="text"]', text)
        self.click('form.editor [data-action="save"]')

    def dialog_button(self, dialog, label):
        self.click(f'#{dialog} button[data-button="{label}"]')

    def tab(self, name):
        self.click(f'[role="tab"][data-tab="{name}"]')
        self.wait(lambda: self.js(f"return !document.getElementById('{name}-panel').hidden"), f"the {name} tab")


# MARK: - The checks


def seed(base, token=None):
    rest_put(
        base,
        "/",
        {
            "users": {
                "ada": {"name": "Ada", "age": 36},
                "bob": {"name": "Bob", "age": 25},
                "cy": {"name": "Cy", "age": 41},
            },
            "settings": {"theme": "dark", "beta": True, "limit": 10},
            "ordering": {k: "x" for k in ("b", "10", "a", "01", "2", "-1", "1")},
            "many": {f"n{j}": {f"c{i:02d}": i for i in range(60)} for j in range(1, 5)},
        },
        token,
    )
    rest_put(base, "/big", {f"k{i:06d}": i for i in range(BIG)}, token)


def tree_checks(page, base):
    driver = page.driver
    driver.get(base + "/")
    page.wait(lambda: driver.current_url.endswith("/_/"), "GET / from a browser to redirect to /_/")
    check(True, "a browser's GET / is redirected to the data browser at /_/")
    driver.get(f"{base}/_/#ns={NS}")
    page.wait_node("/users")
    check(page.text(f'{page.node("/settings")} > .row .summary') == "{3 children}", "the root shows its children")
    page.expand("/users")
    page.expand("/users/ada")
    page.wait_value("/users/ada/name", '"Ada"')
    page.expand("/settings")
    page.wait_value("/settings/beta", "true")
    check(True, "expanding shows children and typed values")
    page.expand("/ordering")
    shown = page.js("return [...document.querySelectorAll('li[data-path=\"/ordering\"] > ul > li.node')].map(li => li.dataset.path.slice(10))")
    check(shown == ["-1", "1", "2", "10", "01", "a", "b"], f"children in Firebase key order (integers first): {shown}")

    # Inline edit, typed, read back over REST.
    page.click(page.row_action("/users/ada/name", "edit"))
    page.editor_save(text="Ada Lovelace")
    page.wait(lambda: rest_get(base, "/users/ada/name") == "Ada Lovelace", "the edit to reach the server")
    page.wait_value("/users/ada/name", '"Ada Lovelace"')
    check(True, "an inline edit is written (read back over REST)")
    page.click(page.row_action("/users/ada/age", "edit"))
    page.editor_save(text="37", type_="number")
    page.wait(lambda: rest_get(base, "/users/ada/age") == 37, "the number to reach the server")
    check(isinstance(rest_get(base, "/users/ada/age"), int), "a number stays a number")
    page.click(page.row_action("/settings/theme", "edit"))
    page.editor_save(text='{"light": true, "contrast": 2}', type_="json")
    page.wait(lambda: rest_get(base, "/settings/theme") == {"light": True, "contrast": 2}, "JSON to reach the server")
    check(True, "a JSON value replaces a leaf")

    # Bad input: refused by the page, refused by the server, nothing written.
    page.click(page.row_action("/users/ada/age", "edit"))
    page.editor_save(text="thirty", type_="number")
    page.wait(lambda: "is not a number" in (page.text("form.editor .editor-error") or ""), "the number error")
    page.click('form.editor [data-action="cancel"]')
    check(rest_get(base, "/users/ada/age") == 37, "a bad number is refused with a clear message, nothing written")
    page.click(page.row_action("/users", "add"))
    page.editor_save(key="odd", type_="json", text='{"a.b": 1}')
    page.wait(lambda: page.text("form.editor .editor-error"), "the server's error")
    message = page.text("form.editor .editor-error")
    page.click('form.editor [data-action="cancel"]')
    check("a.b" in message and rest_get(base, "/users/odd") is None, f"the server's 400 is shown: {message}")

    # A write made with curl appears live, highlighted.
    rest_put(base, "/users/ada/age", 50)
    page.wait_value("/users/ada/age", "50")
    page.wait(lambda: page.exists(f'{page.node("/users/ada/age")} > .row.flash-changed'), "the highlight")
    rest_put(base, "/users/dee", {"name": "Dee", "age": 33})
    page.wait_node("/users/dee")
    check(True, "REST writes appear live and changed values are highlighted")
    page.screenshot("tree.png")

    # Add, push, delete.
    page.click(page.row_action("/settings", "add"))
    page.editor_save(key="mode", type_="boolean")
    page.wait(lambda: rest_get(base, "/settings/mode") is True, "the added child")
    page.wait_value("/settings/mode", "true")
    check(True, "add child (typed boolean)")
    before = set(rest_get(base, "/users", params="&shallow=true"))
    page.click(page.row_action("/users", "push"))
    page.editor_save(type_="json", text='{"name": "Pushed", "age": 1}')
    page.wait(lambda: len(set(rest_get(base, "/users", params="&shallow=true")) - before) == 1, "the pushed child")
    pushed = (set(rest_get(base, "/users", params="&shallow=true")) - before).pop()
    page.wait_node(f"/users/{pushed}")
    check(pushed.startswith("-") and len(pushed) == 20, f"push child adds a push id ({pushed})")
    page.click(page.row_action("/users/bob", "delete"))
    page.wait(lambda: page.exists("#confirm-dialog"), "the confirmation")
    page.dialog_button("confirm-dialog", "Cancel")
    check(rest_get(base, "/users/bob") is not None, "cancelling the confirmation deletes nothing")
    page.click(page.row_action("/users/bob", "delete"))
    page.dialog_button("confirm-dialog", "Delete")
    page.wait(lambda: rest_get(base, "/users/bob") is None, "the delete")
    page.wait_node("/users/bob", present=False)
    check(True, "delete with confirmation")

    # Import (merge and replace) and export.
    page.click(page.row_action("/users", "import"))
    page.wait(lambda: page.exists("#import-dialog"), "the import dialog")
    page.type('#import-dialog textarea[name="json"]', "{not json")
    page.dialog_button("import-dialog", "Import")
    page.wait(lambda: "Not valid JSON" in (page.text("#import-dialog .dialog-error") or ""), "the import error")
    page.type('#import-dialog textarea[name="json"]', json.dumps({"eve": {"name": "Eve", "age": 30}}))
    page.select('#import-dialog select[name="mode"]', "merge")
    page.dialog_button("import-dialog", "Import")
    page.wait(lambda: rest_get(base, "/users/eve") == {"name": "Eve", "age": 30}, "the merged import")
    check(rest_get(base, "/users/ada/name") == "Ada Lovelace", "import (merge) adds and keeps the rest")
    page.wait_node("/users/eve")
    page.click(page.row_action("/settings", "import"))
    page.type('#import-dialog textarea[name="json"]', json.dumps({"theme": "light"}))
    page.dialog_button("import-dialog", "Import")
    page.wait(lambda: rest_get(base, "/settings") == {"theme": "light"}, "the replacing import")
    check(True, "import (replace) writes the node")
    page.click(page.row_action("/users", "export"))
    page.wait(lambda: page.exists("#export-dialog textarea"), "the export dialog")
    exported = json.loads(page.js("return document.querySelector('#export-dialog textarea').value"))
    page.dialog_button("export-dialog", "Close")
    check(exported == rest_get(base, "/users", params="&format=export"), "export shows the node's JSON")


# The row actions of a node (a branch), by data-action: their title and the start of their
# accessible name (which goes on with the location).
ACTIONS = {"add": "Add child", "push": "Push child", "import": "Import", "export": "Export", "query": "Query", "delete": "Delete"}

# WCAG's contrast ratio of an element's text colour against the page's background.
CONTRAST = """
const rgb = (css) => css.match(/[\\d.]+/g).slice(0, 3).map(Number);
const luminance = (css) => {
  const [r, g, b] = rgb(css).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const a = luminance(getComputedStyle(arguments[0]).color), b = luminance(getComputedStyle(document.body).backgroundColor);
return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
"""


def accessibility_checks(page):
    driver = page.driver
    page.wait_node("/users")
    for action, label in ACTIONS.items():
        button = driver.find_element(By.CSS_SELECTOR, page.row_action("/users", action))
        name = button.accessible_name
        check(
            button.tag_name == "button" and button.get_attribute("title") == label and name == f"{label} /users",
            f"the {action} action is a button titled {label!r}, named {name!r}",
        )
        contrast = page.js(CONTRAST, button)
        opacity = page.js("return getComputedStyle(arguments[0].closest('.actions')).opacity", button)
        check(contrast >= 4.5 and opacity == "1", f"the {action} action is readable at rest: contrast {contrast:.1f}:1")
    edit = driver.find_element(By.CSS_SELECTOR, page.row_action("/users/ada/name", "edit"))
    check(edit.accessible_name == "Edit /users/ada/name" and edit.get_attribute("title") == "Edit", "a value's edit action is named")

    def tab_to(action):
        """Focuses /users's toggle, then presses Tab until the action has the focus: the actions reached on the way."""

        def attempt():
            page.js("document.querySelector(arguments[0]).focus()", page.row_action("/users", "toggle"))
            reached = []
            for _ in range(12):
                ActionChains(driver).send_keys(Keys.TAB).perform()
                focused = page.js("const e = document.activeElement; return e.closest('li.node')?.dataset.path === '/users' ? e.dataset.action || e.tagName : null")
                reached.append(focused)
                if focused == action:
                    return reached
            return False

        return page.wait(attempt, f"Tab to reach /users's {action} action")

    reached = tab_to("delete")
    check([r for r in reached if r in ACTIONS] == list(ACTIONS), f"Tab goes through the row's actions in order: {reached}")
    tab_to("add")
    focused = page.row_action("/users", "add")
    ring = page.js("return getComputedStyle(arguments[0]).outlineStyle", driver.find_element(By.CSS_SELECTOR, focused))
    tip = page.js("const s = getComputedStyle(arguments[0], '::after'); return [s.display, s.content]", driver.find_element(By.CSS_SELECTOR, focused))
    check(ring == "solid" and tip == ["block", '"Add child"'], f"the focused action shows a focus ring ({ring}) and its label ({tip})")
    page.screenshot("actions.png")
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    page.wait(lambda: page.exists(f'{page.node("/users")} > form.editor[data-editor="add"]'), "Enter to open the add editor")
    page.click('form.editor [data-action="cancel"]')
    check(True, "Enter presses a focused action (Add child)")
    tab_to("export")
    ActionChains(driver).send_keys(Keys.SPACE).perform()
    page.wait(lambda: page.exists("#export-dialog textarea"), "Space to open the export dialog")
    page.dialog_button("export-dialog", "Close")
    check(True, "Space presses a focused action (Export)")


def address_checks(page, base):
    driver = page.driver
    odd = "a b?c&d%é"
    rest_put(base, "/links/" + urllib.parse.quote(odd, safe=""), "odd")

    def top():
        """The location the tree opens at (its top row)."""
        return page.js("const e = document.querySelector('#tree li.node.root'); return e ? e.dataset.path : null;")

    def load(address):
        """Loads the page afresh at `address` (not a change of the fragment in the page already open)."""
        driver.get("about:blank")
        driver.get(f"{base}/_/{address}")

    load(f"#/users/ada?ns={NS}")
    page.wait(lambda: top() == "/users/ada", "the page to open at /users/ada")
    page.wait_value("/users/ada/name", '"Ada Lovelace"')
    check(
        not page.exists(page.node("/settings")) and page.js("return document.getElementById('ns').value") == NS
        and page.text("#tree .crumbs [aria-current]") == "ada",
        "a link with a location and a namespace opens that view",
    )
    page.screenshot("address.png")
    page.click(f'#tree .crumbs a[href="#/users?ns={NS}"]')
    page.wait(lambda: top() == "/users" and driver.current_url == f"{base}/_/#/users?ns={NS}", "the crumb's location and address")
    page.wait_node("/users/cy")
    check(True, "a crumb opens its location and the address follows")
    page.click(f'{page.node("/users/cy")} > .row a.key')
    page.wait(lambda: top() == "/users/cy" and driver.current_url == f"{base}/_/#/users/cy?ns={NS}", "the key's location and address")
    page.wait_value("/users/cy/age", "41")
    check(True, "a key's link opens its location and the address follows")
    driver.back()
    page.wait(lambda: top() == "/users" and driver.current_url == f"{base}/_/#/users?ns={NS}", "Back to /users")
    page.wait_node("/users/cy")
    check(True, "Back returns to the location before, in the page and the address")

    load(f"#/links/{urllib.parse.quote(odd, safe='')}?ns={NS}")
    page.wait(lambda: top() == f"/links/{odd}", "the page to open at a key with ? & % and a space")
    page.wait(lambda: page.text("#tree .row .value") == '"odd"', "the odd key's value")
    check(page.text("#tree .crumbs [aria-current]") == odd, "a key with ? & % and a space round-trips through the address")

    load(f"#ns={NS}")
    page.wait(lambda: top() == "/" and driver.current_url == f"{base}/_/#/?ns={NS}", "the older #ns= link rewritten")
    page.wait_node("/users")
    check(True, "an older #ns= link opens the namespace's root, in the current form")


def namespace_checks(page, base):
    status, _ = rest(base, "PUT", "/only", "in other", ns="other")
    assert status == 200
    page.type("#ns", "other")
    page.click('#ns-form button[type="submit"]')
    page.wait_value("/only", '"in other"')
    check(page.driver.current_url.endswith("/_/#/?ns=other") and not page.exists(page.node("/users")), "the namespace switcher opens another namespace")
    page.wait(
        lambda: {"browser", "other", "default"} <= set(page.js("return [...document.querySelectorAll('#ns-list option')].map(o => o.value)")),
        "the namespaces suggested",
    )
    check(True, "the switcher suggests the server's namespaces")
    page.type("#ns", "browser")
    page.click('#ns-form button[type="submit"]')
    page.wait_node("/users")


def query_checks(page, base):
    page.tab("query")
    page.type('#query-panel [name="path"]', "/users")
    page.select('#query-panel [name="orderBy"]', "child")
    page.type('#query-panel [name="child"]', "age")
    page.type('#query-panel [name="start"]', "30")
    page.type('#query-panel [name="limit"]', "10")
    page.click('[data-action="run-query"]')

    def expected():
        users = rest_get(base, "/users")
        rows = [(v.get("age"), k) for k, v in users.items() if isinstance(v.get("age"), (int, float)) and v["age"] >= 30]
        return [k for _, k in sorted(rows)][:10]

    def shown():
        return page.js("return [...document.querySelectorAll('#query-results tr[data-key]')].map(r => r.dataset.key)")

    page.wait(lambda: shown() == expected() and len(shown()) > 0, "the query result")
    check(True, f"orderBy child, startAt, limit: {shown()}")
    rest_put(base, "/users/zed", {"name": "Zed", "age": 31})
    page.wait(lambda: "zed" in shown() and shown() == expected(), "the live query result")
    check(True, "the query result follows a REST write, in order")
    page.dark(True)
    page.screenshot("query-dark.png")
    page.dark(False)
    page.select('#query-panel [name="orderBy"]', "$key")
    page.type('#query-panel [name="start"]', "oops")
    page.click('[data-action="run-query"]')
    page.wait(lambda: "JSON value" in (page.text("#query-state") or ""), "the bad bound message")
    check(True, "a bad query bound gets a clear message")
    page.type('#query-panel [name="start"]', '"c"')
    page.type('#query-panel [name="end"]', '"e~"')
    page.click('[data-action="run-query"]')
    page.wait(lambda: shown() == ["cy", "dee", "eve"], "the key range")
    check(True, "orderBy key with a range")
    page.click('[data-action="stop-query"]')
    page.tab("data")


def paging_checks(page, base):
    def keys():
        return page.js(
            "return [...document.querySelectorAll('li[data-path=\"/big\"] > ul > li.node')].map(li => li.dataset.path.slice(5))"
        )

    def page_of(start):
        return [f"k{i:06d}" for i in range(start, min(start + 50, BIG))]

    page.expand("/big")
    page.wait(lambda: keys() == page_of(0), "the first page of /big")
    check(True, "a node with 100,000 children opens on one page of 50")
    nxt = f'{page.node("/big")} > ul > li.pager [data-action="next-page"]'
    prev = f'{page.node("/big")} > ul > li.pager [data-action="prev-page"]'
    for start in (50, 100, 150):
        page.click(nxt)
        page.wait(lambda: keys() == page_of(start), f"the page from {start}")
    page.click(prev)
    page.wait(lambda: keys() == page_of(100), "the previous page")
    page.type(f'{page.node("/big")} > ul > li.pager input.jump', "k099980")
    page.press_enter(f'{page.node("/big")} > ul > li.pager input.jump')
    page.wait(lambda: keys() == page_of(99_980), "the last page")
    check(page.js(f"return document.querySelector('{nxt}').disabled"), "the last page has no next page")
    rest_put(base, "/big/k099990", "changed")
    page.wait_value("/big/k099990", '"changed"')
    check(True, "paging: next, previous, go to key; a page stays live")
    page.screenshot("paging.png")

    # Each page followed live holds one of the few connections a browser opens to a server: the
    # root and /big follow theirs; of /many's four 60-child nodes, two more may.
    page.expand("/many")
    for j in range(1, 5):
        page.expand(f"/many/n{j}")
        page.wait(lambda: page.exists(page.node(f"/many/n{j}/c00")), f"/many/n{j}'s first page")

    def not_live():
        return page.js(
            "return [...document.querySelectorAll('li.notice')].filter(n => n.textContent.startsWith('Not followed live'))"
            ".map(n => n.closest('li.node').dataset.path)"
        )

    page.wait(lambda: not_live() == ["/many/n3", "/many/n4"], "the pages past the live limit")
    check(True, "past four live pages, more pages show their keys instead of holding a connection")
    page.click(page.row_action("/big", "toggle"))
    page.click(f'{page.node("/many/n4")} > ul > li.notice [data-action="retry-live"]')
    page.wait(lambda: not_live() == ["/many/n3"], "n4 to follow live")
    rest_put(base, "/many/n4/c00", "live")
    page.wait_value("/many/n4/c00", '"live"')
    check(True, "once a page is collapsed, another one follows live again")


def rules_checks(page, base):
    page.tab("rules")
    page.wait(lambda: page.js("return document.getElementById('rules-text').value.includes('rules')"), "the rules")
    check(True, "the rules panel shows the rules document")
    page.type("#rules-text", '{\n  "rules": {\n    ".read": "skies === \'blue\'"\n  }\n}')
    page.click('[data-action="save-rules"]')
    page.wait(lambda: "line 3, column 15" in (page.text("#rules-state") or ""), "the rules error")
    check("Unknown variable" in page.text("#rules-state"), f"invalid rules are refused with line and column: {page.text('#rules-state')}")
    rules = {
        "rules": {
            "users": {
                ".read": True,
                "$uid": {".write": "auth != null && auth.uid == $uid", "age": {".validate": "newData.isNumber()"}},
            },
            "settings": {".read": True, ".write": True},
            "big": {".read": True, ".write": True},
            "secret": {".read": False},
        }
    }
    page.type("#rules-text", json.dumps(rules, indent=2))
    page.click('[data-action="save-rules"]')
    page.wait(lambda: "Saved" in (page.text("#rules-state") or ""), "the saved rules")
    check(rest(base, "GET", "/.settings/rules")[1] == rules, "saved rules are in force on the server")

    def simulate(operation, path, auth="", data=None, draft=False):
        page.select('#rules-test [name="operation"]', operation)
        page.type('#rules-test [name="path"]', path)
        page.type('#rules-test [name="auth"]', auth)
        if data is not None:
            page.type('#rules-test [name="data"]', json.dumps(data))
        if page.js("return document.querySelector('#rules-test [name=\"draft\"]').checked") != draft:
            page.click('#rules-test [name="draft"]')
        page.js("document.getElementById('rules-test-result').textContent = ''")
        page.click('[data-action="simulate"]')
        page.wait(lambda: page.text("#rules-test-result"), "the simulation")
        return page.text("#rules-test-result")

    age = rest_get(base, "/users/ada/age")
    result = simulate("read", "/secret")
    check(result.startswith("Denied"), f"simulated read, signed out: {result}")
    result = simulate("set", "/users/ada/age", '{"sub": "ada"}', 51)
    check(result.startswith("Allowed by /users/$uid/.write (line"), f"simulated set as the owner: {result}")
    result = simulate("set", "/users/ada/age", '{"sub": "ada"}', "old")
    check(result.startswith("Denied by /users/$uid/age/.validate"), f"simulated set failing .validate: {result}")
    result = simulate("update", "/users/ada", '{"sub": "bob"}', {"age": 3})
    check(result.startswith("Denied: no rule grants it"), f"simulated update as someone else: {result}")
    draft = json.loads(json.dumps(rules))
    draft["rules"]["secret"][".read"] = "auth != null"
    page.type("#rules-text", json.dumps(draft, indent=2))
    result = simulate("read", "/secret", '{"sub": "eve"}', draft=True)
    check(result.startswith("Allowed by /secret/.read"), f"simulated read by unsaved rules: {result}")
    check(rest_get(base, "/users/ada/age") == age and rest(base, "GET", "/.settings/rules")[1] == rules, "simulations write nothing")
    page.screenshot("rules.png")
    page.tab("data")
    page.wait(lambda: "Permission denied" in (page.text(f'{page.node("/")} > ul > li.notice') or ""), "the root's denial")
    check(True, "a location the rules no longer let the page read says so")
    page.click(page.row_action("/", "add"))
    page.editor_save(key="locked", text="x")
    page.wait(lambda: "Permission denied" in (page.text("form.editor .editor-error") or ""), "the permission error")
    page.click('form.editor [data-action="cancel"]')
    check(rest_get(base, "/users/ada/name") == "Ada Lovelace" and rest(base, "GET", "/locked")[0] == 401, "a write the rules refuse shows 'Permission denied'")
    page.tab("rules")
    page.type("#rules-text", json.dumps({"rules": {".read": True, ".write": True}}))
    page.click('[data-action="save-rules"]')
    page.tab("data")
    page.wait_node("/users")
    check(True, "after new rules are saved the tree follows again")


def reconnect_checks(page, base, port):
    proxy = Proxy(port)
    proxy.start()
    via = f"http://127.0.0.1:{proxy.port}"
    page.driver.get(f"{via}/_/#ns={NS}")
    page.expand("/users")
    page.expand("/users/ada")
    page.wait_value("/users/ada/age", "50")
    page.wait(lambda: page.text("#status") == "Live", "the live status")
    proxy.cut()
    page.wait(lambda: "Offline" in (page.text("#status") or ""), "the offline status")
    check(True, "a server that goes away shows as offline")
    rest_put(base, "/users/ada/age", 51)
    proxy.start()
    page.wait(lambda: page.text("#status") == "Live", "the reconnection", timeout=60)
    page.wait_value("/users/ada/age", "51")
    check(True, "the page reconnects and catches up with what changed meanwhile")
    proxy.cut()


def guarded_checks(page, base, token, small_buffer):
    seed(base, token)
    status, _ = rest(base, "GET", "/users")
    check(status == 401, "the guarded server refuses reads without a token")
    page.driver.get(f"{base}/_/#ns={NS}")
    page.wait(lambda: page.exists("#token-dialog"), "the token prompt")
    page.type('#token-dialog input[name="token"]', "wrong")
    page.dialog_button("token-dialog", "Use token")
    page.wait(lambda: page.exists("#token-dialog"), "the token prompt again")
    check(True, "a wrong token is refused and asked again")
    page.type('#token-dialog input[name="token"]', token)
    page.dialog_button("token-dialog", "Use token")
    page.wait_node("/users")
    if small_buffer:
        # The root's first page holds /big's 100,000 children: more than this server answers at
        # once. The page falls back to the root's keys, and each child can still be followed.
        notice = f'{page.node("/")} > ul > li.notice'
        page.wait(lambda: "Too large to follow live" in (page.text(notice) or ""), "the too-large notice")
        check(page.text(f'{page.node("/users")} > .row .summary') == "…", "a page too large to stream shows its keys only")
        page.expand("/big")
        page.wait(lambda: page.exists(page.node("/big/k000049")) and not page.exists(page.node("/big/k000050")), "/big's first page")
        check(True, "a child of a key-only page opens and pages on its own")
    page.expand("/users")
    page.wait_node("/users/ada")
    stored = page.js("return [sessionStorage.getItem('canopy.token'), JSON.stringify(localStorage), document.cookie]")
    check(stored[0] == token and token not in stored[1] and token not in stored[2], "the token is kept in sessionStorage only")
    page.expand("/users/ada")
    page.click(page.row_action("/users/ada/name", "edit"))
    page.editor_save(text="Ada (guarded)")
    page.wait(lambda: rest_get(base, "/users/ada/name", token) == "Ada (guarded)", "the guarded edit")
    check(True, "with the token, the page reads and writes")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--guarded-url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--guarded-small-buffer", action="store_true", help="the guarded server's largest answer is under 1 MB")
    arguments = parser.parse_args()
    base = arguments.url.rstrip("/")
    seed(base)
    page = Page(arguments.artifacts)
    try:
        tree_checks(page, base)
        accessibility_checks(page)
        address_checks(page, base)
        namespace_checks(page, base)
        query_checks(page, base)
        paging_checks(page, base)
        rules_checks(page, base)
        reconnect_checks(page, base, int(base.rsplit(":", 1)[1]))
        guarded_checks(page, arguments.guarded_url.rstrip("/"), arguments.token, arguments.guarded_small_buffer)
    except BaseException:
        page.screenshot("failure.png")
        print(page.js("return document.body.innerText")[:4000])
        for entry in page.driver.get_log("browser"):
            print("console:", entry)
        raise
    finally:
        page.close()
    print("browser: all checks passed")


if __name__ == "__main__":
    main()
