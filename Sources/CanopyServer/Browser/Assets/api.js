// The server's own REST API (fetch) and the tab's credentials: the admin token lives in
// sessionStorage only (this tab, until it closes), the namespace in the page's address
// (address.js).

import { parseAddress } from './address.js';

const TOKEN_KEY = 'canopy.token';

export const session = {
  get token() { return sessionStorage.getItem(TOKEN_KEY) || ''; },
  set token(value) {
    if (value) sessionStorage.setItem(TOKEN_KEY, value);
    else sessionStorage.removeItem(TOKEN_KEY);
  },
  /** The namespace ('' is the server's default one). */
  ns: parseAddress(location.hash).ns,
};

/** A refused request: `status` 0 when the server could not be reached. */
export class ServerError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }

  /** Whether a (different) token might help: 401 for a missing, wrong or expired credential. */
  get isAuth() { return this.status === 401; }
  get isOffline() { return this.status === 0; }
}

/** A query parameter's value as JSON (`"$key"`, `"ada"`, `3`), as the REST API wants it. */
export const jsonParam = (value) => JSON.stringify(value);

/** The REST address of a location: `/a/b.json?…&ns=…` (with `auth=` for EventSource, which can't set headers). */
export function restURL(path, params = {}, { withToken = false } = {}) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') query.set(name, value);
  }
  if (session.ns) query.set('ns', session.ns);
  if (withToken && session.token) query.set('auth', session.token);
  const text = query.toString();
  return '/' + path.map(encodeURIComponent).join('/') + '.json' + (text ? '?' + text : '');
}

async function send(method, url, body, asText = false) {
  const headers = {};
  if (session.token) headers.Authorization = `Bearer ${session.token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(url, { method, headers, body, cache: 'no-store' });
  } catch {
    throw new ServerError(0, 'The server can\'t be reached.');
  }
  const text = await response.text();
  if (!response.ok) {
    let message = '';
    try { message = JSON.parse(text).error; } catch { /* not JSON */ }
    throw new ServerError(response.status, message || `${response.status} ${response.statusText}`);
  }
  if (asText) return text;
  return text ? JSON.parse(text) : null;
}

const body = (value) => JSON.stringify(value === undefined ? null : value);

export const get = (path, params) => send('GET', restURL(path, params));
export const getText = (path, params) => send('GET', restURL(path, params), undefined, true);
export const put = (path, value) => send('PUT', restURL(path, { print: 'silent' }), body(value));
export const patch = (path, value) => send('PATCH', restURL(path, { print: 'silent' }), body(value));
export const remove = (path) => send('DELETE', restURL(path, { print: 'silent' }));
/** Adds `value` under a new push id; answers the id. */
export const push = async (path, value) => (await send('POST', restURL(path), body(value))).name;

/** A cheap read that tells whether the location can be read (and the server reached). */
export const probe = (path) => get(path, { shallow: 'true', limitToFirst: '1' });

export const rulesPath = ['.settings', 'rules'];
export const getRules = () => getText(rulesPath);
export const putRules = (text) => send('PUT', restURL(rulesPath), text);

/** The namespaces (`/.inspect/databases.json`), or [] when the server won't say. */
export async function namespaces() {
  try {
    return (await get(['.inspect', 'databases'])).map((d) => d.name);
  } catch {
    return [];
  }
}

/**
 * Judges a read or write by the rules without making it (`/.settings/rules/simulate.json`):
 * `{operation, path, data, auth, rules}` → `{allowed, rule, reason}`.
 */
export const simulateRules = async (request) =>
  send('POST', restURL(['.settings', 'rules', 'simulate']), JSON.stringify(request));