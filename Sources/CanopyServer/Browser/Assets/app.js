// The data browser's entry point: the header (namespace, token, connection state), the tabs
// (Data, Query, Rules) and the token prompt.

import * as api from './api.js';
import { h, modal } from './dom.js';
import { QueryPanel } from './query.js';
import { RulesPanel } from './rules.js';
import { Tree } from './tree.js';

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

function setNamespace(ns) {
  api.session.ns = ns;
  const params = new URLSearchParams(location.hash.slice(1));
  if (ns) params.set('ns', ns);
  else params.delete('ns');
  history.replaceState(null, '', params.size ? `#${params}` : location.pathname);
  $('#ns').value = ns;
  document.title = `${ns || 'default'} — Canopy`;
  query.stop();
  tree.mount();
  if (!$('#rules-panel').hidden) rules.load();
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
  setNamespace($('#ns').value.trim());
});
$('#ns').addEventListener('focus', listNamespaces);
$('#token-button').addEventListener('click', () => askToken());
for (const tab of document.querySelectorAll('[role="tab"]')) tab.addEventListener('click', () => selectTab(tab.dataset.tab));

window.addEventListener('hashchange', () => {
  const ns = new URLSearchParams(location.hash.slice(1)).get('ns') || '';
  if (ns !== api.session.ns) setNamespace(ns);
});

showToken();
setNamespace(api.session.ns);
listNamespaces();