// The page's address: the location the tree opens at and the namespace, in the URL's fragment
// (`/_/#/users/ada?ns=blog`), so a link opens the same view and Back goes to the one before. The
// keys are percent-encoded (a key may hold `?`, `&`, `%` or spaces). Links of the older form,
// `#ns=blog`, still open that namespace's root.

/** `{path, ns}` from a fragment: `#/users/ada?ns=blog`, `#/`, `#ns=blog` or none. */
export function parseAddress(hash) {
  const text = hash.startsWith('#') ? hash.slice(1) : hash;
  let pathPart = '';
  let params = text;
  if (text.startsWith('/')) {
    const query = text.indexOf('?');
    pathPart = query < 0 ? text : text.slice(0, query);
    params = query < 0 ? '' : text.slice(query + 1);
  }
  const path = pathPart.split('/').filter((key) => key !== '').map(decodeKey);
  return { path, ns: new URLSearchParams(params).get('ns') || '' };
}

function decodeKey(key) {
  try {
    return decodeURIComponent(key);
  } catch {
    return key; // a lone `%`: the key as written
  }
}

/** The fragment that names `path` in namespace `ns` (`''` is the default one). */
export function addressOf(path, ns) {
  return '#/' + path.map(encodeURIComponent).join('/') + (ns ? `?ns=${encodeURIComponent(ns)}` : '');
}
