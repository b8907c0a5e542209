// A live value over the server's event stream (SSE): the initial `put`, then `put`/`patch`
// events applied to a local copy; `cancel` and `auth_revoked` handled; reconnects (with backoff)
// after the server goes away, and the first `put` after a reconnect brings the copy up to date.

import { get, probe, restURL, ServerError } from './api.js';
import { childAt, diffPaths, parsePath, setAt } from './values.js';

const RETRY_MS = [500, 1000, 2000, 4000, 8000];

export class LiveValue {
  /**
   * @param path the location's keys
   * @param params REST query parameters (a query window), or {}
   * @param handlers onValue(value, changedPaths | null for a full reload), onStatus(status) with
   *   status.kind 'live' | 'connecting' | 'offline' | 'denied' | 'error' | 'too-large';
   *   probeParams: what to read to learn why the stream failed (default: a one-key shallow read)
   */
  constructor(path, params, { onValue, onStatus, probeParams }) {
    this.path = path;
    this.params = params;
    this.probeParams = probeParams;
    this.onValue = onValue;
    this.onStatus = onStatus || (() => {});
    this.value = null;
    this.loaded = false;
    this.fresh = true;
    this.attempt = 0;
    this.failuresBeforeData = 0;
    this.source = null;
    this.timer = null;
    this.stopped = false;
  }

  start() {
    this.stopped = false;
    this.open();
    return this;
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.source?.close();
    this.source = null;
  }

  /** Reconnects now (after the token changed, say). */
  restart() {
    this.stop();
    this.attempt = 0;
    this.failuresBeforeData = 0;
    this.start();
  }

  open() {
    this.status({ kind: 'connecting' });
    this.fresh = true;
    const source = new EventSource(restURL(this.path, this.params, { withToken: true }));
    this.source = source;
    let gotData = false;
    source.addEventListener('put', (e) => {
      gotData = true;
      this.attempt = 0;
      this.failuresBeforeData = 0;
      this.apply(JSON.parse(e.data), false);
    });
    source.addEventListener('patch', (e) => this.apply(JSON.parse(e.data), true));
    source.addEventListener('cancel', (e) => {
      // New rules took read access away, or the server is shutting down.
      source.close();
      const reason = e.data ? JSON.parse(e.data) : 'cancelled';
      if (/denied/i.test(String(reason))) this.status({ kind: 'denied', message: 'Permission denied (the rules changed).' });
      else this.retry(gotData);
    });
    source.addEventListener('auth_revoked', () => {
      source.close();
      this.status({ kind: 'denied', message: 'The token expired.', auth: true });
    });
    source.onerror = () => {
      if (this.source !== source || this.stopped) return;
      source.close();
      this.retry(gotData);
    };
  }

  /** After the stream failed: asks the server why (EventSource can't tell), then retries or gives up. */
  async retry(gotData) {
    if (this.stopped) return;
    if (!gotData) this.failuresBeforeData += 1;
    try {
      await (this.probeParams ? get(this.path, this.probeParams) : probe(this.path));
    } catch (error) {
      if (this.stopped) return;
      if (error instanceof ServerError && error.isOffline) {
        this.schedule({ kind: 'offline', message: 'The server can\'t be reached; retrying…' });
      } else if (error instanceof ServerError && error.isAuth) {
        this.status({ kind: 'denied', message: error.message, auth: true });
      } else {
        this.status({ kind: 'error', message: error.message });
      }
      return;
    }
    if (this.stopped) return;
    // Readable, yet the stream ends before its first event twice: the server refuses a stream
    // whose first event is larger than its largest answer.
    if (this.failuresBeforeData >= 2) {
      this.status({ kind: 'too-large' });
      return;
    }
    this.schedule({ kind: 'connecting' });
  }

  schedule(status) {
    this.status(status);
    clearTimeout(this.timer);
    const delay = RETRY_MS[Math.min(this.attempt, RETRY_MS.length - 1)];
    this.attempt += 1;
    this.timer = setTimeout(() => { if (!this.stopped) this.open(); }, delay);
  }

  status(status) {
    this.lastStatus = status;
    this.onStatus(status);
  }

  apply(event, isPatch) {
    const base = parsePath(event.path);
    const writes = isPatch
      ? Object.entries(event.data || {}).map(([key, data]) => [base.concat(parsePath(key)), data])
      : [[base, event.data]];
    const changed = [];
    for (const [at, data] of writes) {
      const before = childAt(this.value, at);
      this.value = setAt(this.value, at, data);
      // A query window sends a whole child when a value deep inside it changes: find what did.
      diffPaths(before, childAt(this.value, at), at, changed);
    }
    const first = this.fresh;
    this.fresh = false;
    this.loaded = true;
    if (first) this.status({ kind: 'live' });
    // The first put (and the one after a reconnect) is a full load: nothing to highlight.
    this.onValue(this.value, first ? null : changed);
  }
}