// The query panel: orderBy child/key/value/priority, ranges and limits, run as a live query
// window over the server's event stream; the result is shown in query order and kept up to date.

import * as api from './api.js';
import { flash, h } from './dom.js';
import { LiveValue } from './live.js';
import { childAt, compareKeys, compareValues, displayValue, parsePath, pathText, sortedKeys } from './values.js';

export class QueryPanel {
  constructor(container) {
    this.container = container;
    this.live = null;
    this.field = (name) => container.querySelector(`[name="${name}"]`);
    this.results = container.querySelector('#query-results');
    this.url = container.querySelector('#query-url');
    this.state = container.querySelector('#query-state');
    container.querySelector('form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.run();
    });
    container.querySelector('[data-action="stop-query"]').addEventListener('click', () => this.stop('Stopped.'));
    this.field('orderBy').addEventListener('change', () => this.showChildField());
    this.showChildField();
  }

  showChildField() {
    this.field('child').hidden = this.field('orderBy').value !== 'child';
  }

  setPath(path) {
    this.field('path').value = pathText(path);
  }

  /** The REST parameters of the form, or throws an Error naming the bad field. */
  params() {
    const order = this.field('orderBy').value;
    const params = {};
    if (order === 'child') {
      const child = this.field('child').value.trim();
      if (!child) throw new Error('Name the child to order by (for example "age" or "address/city").');
      params.orderBy = api.jsonParam(child);
    } else {
      params.orderBy = api.jsonParam(order);
    }
    const json = (name, label) => {
      const text = this.field(name).value.trim();
      if (!text) return undefined;
      try {
        JSON.parse(text);
      } catch {
        throw new Error(`${label} must be a JSON value: a "quoted string", a number, true, false or null (not ${text}).`);
      }
      return text;
    };
    const start = json('start', 'The start');
    if (start !== undefined) params[this.field('startKind').value] = start;
    const end = json('end', 'The end');
    if (end !== undefined) params[this.field('endKind').value] = end;
    const equal = json('equalTo', 'Equal to');
    if (equal !== undefined) params.equalTo = equal;
    const limit = this.field('limit').value.trim();
    if (limit) {
      if (!/^[0-9]+$/.test(limit)) throw new Error('The limit must be a whole number.');
      params[this.field('limitKind').value] = limit;
    }
    return params;
  }

  run() {
    this.stop();
    let params;
    try {
      params = this.params();
    } catch (error) {
      this.showState('error', error.message);
      return;
    }
    const path = parsePath(this.field('path').value);
    this.order = this.field('orderBy').value === 'child' ? parsePath(this.field('child').value) : this.field('orderBy').value;
    this.url.textContent = `curl '${location.origin}${api.restURL(path, params)}'`;
    this.results.replaceChildren();
    this.live = new LiveValue(path, params, {
      probeParams: params,
      onValue: (value, changed) => this.show(value, changed),
      onStatus: (status) => this.showState(status.kind, status.message),
    }).start();
  }

  stop(message) {
    this.live?.stop();
    this.live = null;
    if (message) this.showState('stopped', message);
  }

  restart() {
    if (this.live) this.live.restart();
  }

  showState(kind, message) {
    const text = {
      live: 'Live: the result follows every write.',
      connecting: 'Connecting…',
      offline: 'The server can\'t be reached; retrying…',
      'too-large': 'The result is too large to stream; narrow the query (add a limit).',
    }[kind] || message || kind;
    this.state.textContent = text;
    this.state.className = `query-state ${kind}`;
  }

  ordered(value) {
    const keys = sortedKeys(value);
    if (this.order === '$key' || this.order === '$priority') return keys;
    const of = (key) => (this.order === '$value' ? value[key] : childAt(value[key], this.order));
    return keys.sort((a, b) => compareValues(of(a), of(b)) || compareKeys(a, b));
  }

  show(value, changed) {
    const rows = [];
    if (value === null || typeof value !== 'object') {
      rows.push(h('tr', { class: 'empty' }, h('td', { colspan: 3 }, value === null ? 'No results.' : displayValue(value))));
    } else {
      this.ordered(value).forEach((key, i) => {
        const child = value[key];
        const text = typeof child === 'object' ? JSON.stringify(child) : displayValue(child);
        rows.push(h('tr', { dataset: { key } },
          h('td', { class: 'index' }, String(i + 1)),
          h('td', { class: 'key' }, key),
          h('td', { class: 'value', title: text }, text.length > 200 ? text.slice(0, 200) + '…' : text)));
      });
    }
    this.results.replaceChildren(...rows);
    this.container.querySelector('#query-count').textContent =
      value && typeof value === 'object' ? `${Object.keys(value).length} result(s)` : '';
    for (const path of changed || []) {
      if (path.length === 0) continue;
      flash(this.results.querySelector(`tr[data-key="${CSS.escape(path[0])}"]`));
    }
  }
}