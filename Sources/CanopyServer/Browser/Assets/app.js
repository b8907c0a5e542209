// The data browser's entry point: the header (namespace, token, connection state), the tabs
// (Data, Query, Rules), the token prompt, and the page's address (what it names is shown).

import { addressOf, parseAddress } from './address.js';
import * as api from './api.js';
import { h, modal } from './dom.js';
import { QueryPanel } from './query.js';
import { RulesPanel } from './rules.js';
import { Tree } from './tree.js';
import { pathText } from './values.js';

const $ = (selector) => document.querySelector(selector);

let prompting = false;

/** Asks for the admin token (kept in this tab's sessionStorage only). */
async function askToken(message) {
  if (prompting) return;
  prompting = true;
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', 'aria-label': 'Token', value: api.session.token });
  const content = h('div', { class: 'dialog-body' },
    h('p', {}, message || 'The server asks for a credential.'),
    h('p', { class: 'hint' }, 'Enter the admin token (canopy serve --auth-token) or a user\'s ID token. It is kept in this tab only and sent with each request.'),
    input);
  const choice = await modal('Token', content, ['Use token', 'Forget token', 'Cancel'], { id: 'token-dialog' });
  prompting = false;
  if (choice === 'Use token') api.session.token = input.value.trim();
  else if (choice === 'Forget token') api.session.token = '';
  else return;
  showToken();
  tree.restart();
  query.restart();
  if (!$('#rules-panel').hidden) rules.load();
}

function showToken() {
  $('#token-button').textContent = api.session.token ? 'Token: set' : 'Token: none';
}

function showStatus(kind) {
  const label = { live: 'Live', connecting: 'Connecting…', offline: 'Offline — retrying', denied: 'Access denied', error: 'Error' }[kind] || kind;
  const status = $('#status');
  status.textContent = label;
  status.className = `status ${kind}`;
}

function selectTab(name) {
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    const selected = tab.dataset.tab === name;
    tab.setAttribute('aria-selected', String(selected));
    $(`#${tab.dataset.tab}-panel`).hidden = !selected;
  }
  if (name === 'rules') rules.load();
}

/** Opens namespace `ns` (again) with the tree at `path`. */
function setNamespace(ns, path) {
  api.session.ns = ns;
  $('#ns').value = ns;
  query.stop();
  tree.base = path;
  tree.mount();
  if (!$('#rules-panel').hidden) rules.load();
}

/** The address of `path` in `ns`: the root of the default namespace is the page itself. */
const addressFor = (path, ns) => (path.length || ns ? addressOf(path, ns) : location.pathname);

/**
 * Shows what the page's address names (on load, after a link, Back or Forward): its namespace,
 * and the tree at its location. The root of the default namespace is `/_/` itself; older
 * `#ns=…` links are rewritten to the current form.
 */
function openAddress({ reload = false } = {}) {
  const { path, ns } = parseAddress(location.hash);
  const wanted = addressFor(path, ns);
  if (location.hash !== wanted && !(wanted === location.pathname && !location.hash)) history.replaceState(null, '', wanted);
  document.title = `${pathText(path)} — ${ns || 'default'} — Canopy`;
  if (reload || ns !== api.session.ns || !tree.mounted) setNamespace(ns, path);
  else tree.navigate(path);
}

async function listNamespaces() {
  const names = await api.namespaces();
  $('#ns-list').replaceChildren(...names.map((name) => h('option', { value: name })));
}

// The page asks for a token by itself when the server refuses it before anything was shown,
// or refuses the token given; later refusals (rules that changed) show where they apply.
let shownData = false;

const tree = new Tree($('#tree'), {
  onAuthNeeded: (message) => {
    if (api.session.token && message !== 'Permission denied') askToken(`The token was refused: ${message}`);
    else if (!shownData) askToken(`The server refused access: ${message}.`);
  },
  askToken: () => askToken(),
  onStatus: (kind) => {
    if (kind === 'live') shownData = true;
    showStatus(kind);
  },
  onQuery: (path) => {
    query.setPath(path);
    selectTab('query');
  },
});
const query = new QueryPanel($('#query-panel'));
const rules = new RulesPanel($('#rules-panel'), () => tree.restart());

$('#ns-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const ns = $('#ns').value.trim();
  // Another namespace (or its root) is a new address; the same one opens again in place.
  if (ns !== api.session.ns || tree.base.length) history.pushState(null, '', addressFor([], ns));
  openAddress({ reload: true });
});
$('#ns').addEventListener('focus', listNamespaces);
$('#token-button').addEventListener('click', () => askToken());
for (const tab of document.querySelectorAll('[role="tab"]')) tab.addEventListener('click', () => selectTab(tab.dataset.tab));

// A key's link or a crumb changes the fragment; Back and Forward move between addresses.
window.addEventListener('hashchange', () => openAddress());
window.addEventListener('popstate', () => openAddress());
// Leaving the page ends its event streams: a page the browser keeps to go Back to would hold its
// connections to the server (a browser opens few to one server) while another page needs them.
window.addEventListener('pagehide', () => {
  tree.stop();
  query.stop();
});
window.addEventListener('pageshow', (e) => {
  if (e.persisted) openAddress({ reload: true });
});

showToken();
openAddress();
listNamespaces();