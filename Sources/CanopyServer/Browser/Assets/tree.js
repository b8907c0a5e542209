// The data tree: each expanded node with many children (and the root) follows one page of its
// children over a live query window (`orderBy="$key"&limitToFirst=51[&startAt=…]`), so a node
// with a million children opens with one page read; smaller children are drawn from their
// parent's window. A page too large to stream falls back to a shallow listing of its keys.
// The tree opens at one location (`base`, the page's address): a key is a link into its
// location, and the crumbs above lead back up.

import { addressOf } from './address.js';
import * as api from './api.js';
import { confirmDialog, flash, h, notify } from './dom.js';
import { editorForm, exportDialog, importDialog } from './editors.js';
import { LiveValue } from './live.js';
import { childAt, displayValue, editText, pathText, sortedKeys, typeOf } from './values.js';

export const PAGE = 50;

/**
 * The most pages followed live at once. A browser opens at most six HTTP/1.1 connections to a
 * server and each event stream holds one: the query panel and the page's requests need the rest.
 */
const MAX_LIVE = 4;

/** The children of one location, one page at a time, live. */
class NodeView {
  constructor(tree, path) {
    this.tree = tree;
    this.path = path;
    this.id = pathText(path);
    this.pageStarts = [null];
    this.value = null;
    this.loaded = false;
    this.shallow = false;
    this.status = { kind: 'connecting' };
    this.element = h('ul', { class: 'children', dataset: { view: this.id } });
    this.open();
  }

  get page() { return this.pageStarts.length - 1; }

  windowParams(shallow) {
    const params = { limitToFirst: String(PAGE + 1) };
    if (!shallow) params.orderBy = api.jsonParam('$key');
    else params.shallow = 'true';
    const start = this.pageStarts[this.page];
    if (start !== null) params.startAt = api.jsonParam(start);
    return params;
  }

  open() {
    this.live?.stop();
    this.live = null;
    if (!this.shallow && this.tree.liveCount() >= MAX_LIVE) {
      this.shallow = true;
      this.reason = 'too-many';
    }
    if (this.shallow) {
      this.loadKeys();
      return;
    }
    this.live = new LiveValue(this.path, this.windowParams(false), {
      onValue: (value, changed) => {
        this.value = value;
        this.loaded = true;
        if (value === null && this.page === 0) this.loadLeaf();
        else this.render(changed);
      },
      onStatus: (status) => this.setStatus(status),
    }).start();
  }

  /**
   * A window of no children: the location holds a single value (a query window doesn't show it),
   * or nothing. One read tells which.
   */
  async loadLeaf() {
    try {
      this.value = await api.get(this.path, { shallow: 'true' });
    } catch {
      this.value = null;
    }
    this.render(null);
  }

  /** The shallow listing of this page's keys (not live). */
  async loadKeys() {
    this.setStatus({ kind: 'snapshot' });
    try {
      this.value = await api.get(this.path, this.windowParams(true));
      this.loaded = true;
      this.render(null);
    } catch (error) {
      this.setStatus({ kind: error.isOffline ? 'offline' : 'error', message: error.message, auth: error.isAuth });
    }
  }

  setStatus(status) {
    if (status.kind === 'too-large') {
      this.live?.stop();
      this.shallow = true;
      this.reason = 'too-large';
      this.loadKeys();
      return;
    }
    this.status = status;
    if (status.auth) this.tree.authNeeded(status.message);
    this.tree.statusChanged();
    this.render(null);
  }

  goTo(start) {
    this.pageStarts.push(start);
    this.loaded = false;
    this.open();
  }

  back() {
    if (this.pageStarts.length > 1) this.pageStarts.pop();
    this.loaded = false;
    this.open();
  }

  stop() {
    this.live?.stop();
  }

  /** Follows the location again (after a token change or a reconnect request). */
  restart() {
    this.shallow = false;
    this.open();
  }

  render(changed) {
    const items = [];
    const notice = this.notice();
    if (notice) items.push(notice);
    if (this.loaded) {
      const value = this.value;
      if (value === null) {
        items.push(h('li', { class: 'empty' }, this.page > 0 ? 'No more children.' : 'null (no data here)'));
      } else if (typeof value !== 'object') {
        items.push(this.tree.renderNode(this.path, value, { self: true }));
      } else {
        const keys = sortedKeys(value);
        for (const key of keys.slice(0, PAGE)) {
          items.push(this.tree.renderNode(this.path.concat(key), value[key], { unknown: this.shallow }));
        }
        if (this.page > 0 || keys.length > PAGE) items.push(this.pager(keys));
      }
    }
    this.element.replaceChildren(...items);
    this.tree.afterRender(this, changed);
  }

  notice() {
    const { kind, message } = this.status;
    if (this.shallow && kind === 'snapshot') {
      const why = this.reason === 'too-many'
        ? `Not followed live: ${MAX_LIVE} pages are already (a browser keeps few connections to a server); collapse one and try again. Showing its keys. `
        : 'Too large to follow live (this page holds more than the server streams at once): showing its keys. Expand a child to follow it live. ';
      return h('li', { class: 'notice' }, why,
        h('button', { class: 'link', dataset: { action: 'reload' }, onclick: () => this.loadKeys() }, 'Reload'),
        h('button', { class: 'link', dataset: { action: 'retry-live' }, onclick: () => this.restart() }, 'Try live again'));
    }
    if (kind === 'offline' || kind === 'error' || kind === 'denied') {
      return h('li', { class: `notice ${kind}`, role: 'alert' }, message || kind,
        kind === 'offline' ? '' : h('button', { class: 'link', dataset: { action: 'retry' }, onclick: () => this.restart() }, 'Retry'),
        kind === 'denied' ? h('button', { class: 'link', dataset: { action: 'token' }, onclick: () => this.tree.hooks.askToken() }, 'Use a token…') : '');
    }
    if (!this.loaded) return h('li', { class: 'loading' }, 'Loading…');
    return null;
  }

  pager(keys) {
    const next = keys.length > PAGE ? keys[PAGE] : null;
    const first = keys[0];
    const jump = h('input', { type: 'text', placeholder: 'go to key', class: 'jump', 'aria-label': 'Go to key' });
    return h('li', { class: 'pager' },
      h('button', { dataset: { action: 'first-page' }, disabled: this.page === 0, onclick: () => { this.pageStarts = [null]; this.back(); } }, '«'),
      h('button', { dataset: { action: 'prev-page' }, disabled: this.page === 0, onclick: () => this.back() }, '‹ Previous'),
      h('span', { class: 'page-label' }, `${PAGE} per page`, first !== undefined ? `, from "${first}"` : ''),
      h('button', { dataset: { action: 'next-page' }, disabled: next === null, onclick: () => this.goTo(next) }, 'Next ›'),
      h('form', { class: 'jump-form', onsubmit: (e) => { e.preventDefault(); if (jump.value) this.goTo(jump.value); } }, jump));
  }
}

export class Tree {
  /**
   * @param container where the tree goes
   * @param hooks onAuthNeeded(message), askToken(), onStatus(kind), onQuery(path)
   */
  constructor(container, hooks) {
    this.container = container;
    this.hooks = hooks;
    /** The location the tree opens at (its top row), as keys. */
    this.base = [];
    this.expanded = new Set(['/']);
    this.views = new Map();
    this.editor = null;
    this.pendingCollect = false;
    this.mounted = false;
  }

  /** (Re)builds the tree at `base` for the current namespace and token. */
  mount() {
    for (const view of this.views.values()) view.stop();
    this.views.clear();
    this.editor = null;
    this.mounted = true;
    const root = this.view(this.base);
    this.rootItem = h('li', { class: 'node root', dataset: { path: pathText(this.base) } });
    this.container.replaceChildren(h('ul', { class: 'tree' }, this.rootItem));
    this.renderRoot();
    root.render(null);
  }

  /** Opens the tree at `path` (a key's link, a crumb, the page's address). */
  navigate(path) {
    if (pathText(path) === pathText(this.base)) return;
    this.base = path;
    this.mount();
  }

  renderRoot() {
    const row = this.row(this.base, null, { root: true });
    const editor = this.editor?.id === pathText(this.base) ? editorForm(this, this.editor) : null;
    this.rootItem.replaceChildren(row, editor || '', this.view(this.base).element);
  }

  view(path) {
    const id = pathText(path);
    let view = this.views.get(id);
    if (!view) {
      view = new NodeView(this, path);
      this.views.set(id, view);
    }
    return view;
  }

  /** Stops following every location (the page is left). */
  stop() {
    for (const view of this.views.values()) view.stop();
  }

  /** Every view again (after the token changed). */
  restart() {
    for (const view of this.views.values()) view.restart();
  }

  /** How many pages follow their location live now. */
  liveCount() {
    return [...this.views.values()].filter((view) => view.live && !view.live.stopped).length;
  }

  statusChanged() {
    if (this.views.size === 0) return;
    const kinds = new Set([...this.views.values()].map((v) => v.status.kind));
    const kind = ['offline', 'denied', 'error', 'connecting'].find((k) => kinds.has(k)) || 'live';
    this.hooks.onStatus(kind);
  }

  authNeeded(message) {
    this.hooks.onAuthNeeded(message);
  }

  /** The `li` of one location: its row, an open editor, and its children when expanded. */
  renderNode(path, value, { unknown = false, self = false } = {}) {
    const id = pathText(path);
    const isObject = !self && (unknown || typeOf(value) === 'object');
    const expanded = isObject && this.expanded.has(id);
    const item = h('li', { class: `node ${isObject ? 'branch' : 'leaf'}${expanded ? ' open' : ''}`, dataset: { path: id } });
    const editor = this.editor?.id === id && !self ? editorForm(this, this.editor) : null;
    let children = null;
    if (expanded) {
      if (!unknown && Object.keys(value).length <= PAGE && !this.views.has(id)) {
        children = h('ul', { class: 'children' }, sortedKeys(value).map((key) => this.renderNode(path.concat(key), value[key])));
      } else {
        children = this.view(path).element;
      }
    }
    item.append(this.row(path, value, { isObject, unknown, expanded, self }), editor || '', children || '');
    return item;
  }

  row(path, value, { isObject = true, unknown = false, expanded = true, root = false, self = false }) {
    const id = pathText(path);
    const key = root ? this.crumbs(path)
      : self ? h('span', { class: 'key' }, '(value)')
        : h('a', { class: 'key', href: addressOf(path, api.session.ns), title: `Open ${id}` }, path[path.length - 1]);
    const toggle = isObject && !root
      ? h('button', { class: 'toggle', dataset: { action: 'toggle' }, 'aria-expanded': String(expanded), title: expanded ? 'Collapse' : 'Expand',
        onclick: () => this.toggle(id) }, expanded ? '▾' : '▸')
      : h('span', { class: 'toggle spacer' });
    let shown;
    if (root) shown = '';
    else if (unknown) shown = h('span', { class: 'summary' }, '…');
    else if (isObject) {
      const count = Object.keys(value).length;
      shown = h('span', { class: 'summary' }, `{${count.toLocaleString('en-US')} ${count === 1 ? 'child' : 'children'}}`);
    } else {
      shown = h('span', { class: `value type-${typeOf(value)}`, title: `${typeOf(value)} — double-click to edit`,
        ondblclick: () => this.openEditor(path, 'edit', value) }, displayValue(value));
    }
    // Real buttons (Tab reaches them, Enter and Space press them), named for assistive
    // technology with their location; the label shows beside the icon on hover and focus.
    const action = (name, icon, label, handler) =>
      h('button', { type: 'button', class: 'action', dataset: { action: name, label }, title: label, 'aria-label': `${label} ${id}`, onclick: handler },
        h('span', { class: 'icon', 'aria-hidden': 'true' }, icon));
    const actions = isObject
      ? [
          action('add', '+', 'Add child', () => this.openEditor(path, 'add')),
          action('push', '⊕', 'Push child', () => this.openEditor(path, 'push')),
          action('import', '⇩', 'Import', () => importDialog(this, path)),
          action('export', '⇧', 'Export', () => exportDialog(path)),
          action('query', '⌕', 'Query', () => this.hooks.onQuery(path)),
        ]
      : [action('edit', '✎', 'Edit', () => this.openEditor(path, 'edit', value))];
    actions.push(action('delete', '✕', 'Delete', () => this.remove(path)));
    return h('div', { class: 'row' },
      toggle,
      key,
      shown,
      h('span', { class: 'actions' }, actions));
  }

  /** The top row's location: the namespace, then each key, each a link up to its location. */
  crumbs(path) {
    const ns = api.session.ns;
    const link = (keys, text) => keys.length === path.length
      ? h('span', { class: 'crumb', 'aria-current': 'location' }, text)
      : h('a', { class: 'crumb', href: addressOf(keys, ns), title: `Open ${pathText(keys)}` }, text);
    const items = [link([], ns || 'default namespace'), h('span', { class: 'separator', 'aria-hidden': 'true' }, ' /')];
    path.forEach((key, i) => {
      items.push(' ', link(path.slice(0, i + 1), key));
      if (i < path.length - 1) items.push(h('span', { class: 'separator', 'aria-hidden': 'true' }, ' /'));
    });
    return h('nav', { class: 'crumbs', 'aria-label': 'Location' }, items);
  }

  toggle(id) {
    if (this.expanded.has(id)) this.expanded.delete(id);
    else this.expanded.add(id);
    this.renderAll();
  }

  /** Opens the inline editor: 'edit' a value, 'add' a named child, 'push' a child. */
  openEditor(path, mode, value) {
    const type = mode === 'edit' ? typeOf(value) : 'string';
    this.editor = { id: pathText(path), path, mode, type: type === 'object' ? 'json' : type, key: '', text: mode === 'edit' ? editText(value) : '', error: '', focus: mode === 'add' ? 'key' : 'text' };
    this.renderAll();
  }

  closeEditor() {
    this.editor = null;
    this.renderAll();
  }

  renderAll() {
    this.renderRoot();
    for (const view of this.views.values()) view.render(null);
  }

  /** After a write from the page: a view showing only keys (or a single value) reads again. */
  wrote(path) {
    for (const view of this.views.values()) {
      if (!path.slice(0, view.path.length).every((k, i) => k === view.path[i])) continue;
      if (view.shallow) view.loadKeys();
      else if (view.loaded && view.value !== null && typeof view.value !== 'object') view.loadLeaf();
    }
  }

  async remove(path) {
    const what = path.length ? pathText(path) : 'the whole namespace';
    if (!(await confirmDialog('Delete?', `Delete ${what} and everything under it? This can't be undone.`))) return;
    try {
      await api.remove(path);
      this.wrote(path);
      notify(`Deleted ${pathText(path)}.`, 'info');
    } catch (error) {
      notify(`Could not delete ${pathText(path)}: ${error.message}`);
    }
  }

  /** Highlights what changed (the nearest row shown) and stops views no longer shown. */
  afterRender(view, changed) {
    if (this.editor?.focus) {
      const field = document.querySelector(`.editor [data-field="${this.editor.focus}"]`);
      if (field && document.activeElement !== field) {
        field.focus();
        if (typeof field.selectionStart === 'number' && field.type !== 'number') field.selectionStart = field.selectionEnd = field.value.length;
      }
    }
    if (changed) {
      for (const relative of changed) {
        const absolute = view.path.concat(relative);
        const removed = childAt(view.value, relative) === null;
        for (let n = absolute.length; n >= view.path.length; n--) {
          const row = this.container.querySelector(`li[data-path="${CSS.escape(pathText(absolute.slice(0, n)))}"] > .row`);
          if (row) {
            flash(row, removed && n === absolute.length ? 'removed' : 'changed');
            break;
          }
        }
      }
    }
    if (!this.pendingCollect) {
      this.pendingCollect = true;
      queueMicrotask(() => {
        this.pendingCollect = false;
        for (const [id, v] of this.views) {
          if (id !== pathText(this.base) && !v.element.isConnected) {
            v.stop();
            this.views.delete(id);
          }
        }
        this.statusChanged();
      });
    }
  }
}