// Editing: the inline editor (edit a value, add or push a child, typed), and the import and
// export dialogs.

import * as api from './api.js';
import { h, modal, notify } from './dom.js';
import { keyProblem, parseTyped, pathText } from './values.js';

const TYPES = ['string', 'number', 'boolean', 'null', 'json'];

/** The inline editor of `tree.editor` ({id, path, mode, type, key, text, error, focus}). */
export function editorForm(tree, editor) {
  const track = (field) => ({
    dataset: { field },
    oninput: (e) => { editor[field] = e.target.value; },
    onfocus: () => { editor.focus = field; },
  });
  const typeSelect = h('select', { ...track('type'), 'aria-label': 'Type', onchange: (e) => { editor.type = e.target.value; tree.renderAll(); } },
    TYPES.map((t) => h('option', { value: t, selected: t === editor.type }, t)));
  let input;
  switch (editor.type) {
    case 'null':
      input = h('span', { class: 'hint' }, editor.mode === 'edit' ? 'null deletes the value' : 'null writes nothing');
      break;
    case 'boolean':
      if (editor.text !== 'true' && editor.text !== 'false') editor.text = 'true';
      input = h('select', { ...track('text'), 'aria-label': 'Value', onchange: (e) => { editor.text = e.target.value; } },
        ['true', 'false'].map((t) => h('option', { value: t, selected: t === editor.text }, t)));
      break;
    case 'json':
      input = h('textarea', { ...track('text'), rows: 4, spellcheck: 'false', 'aria-label': 'Value (JSON)', value: editor.text });
      break;
    default:
      input = h('input', { ...track('text'), type: 'text', 'aria-label': 'Value', value: editor.text, spellcheck: 'false' });
  }
  const key = editor.mode === 'add'
    ? h('input', { ...track('key'), type: 'text', placeholder: 'key', 'aria-label': 'Key', value: editor.key, class: 'key-input', spellcheck: 'false' })
    : null;
  const title = { edit: 'Edit', add: 'New child', push: 'Push child' }[editor.mode];
  return h('form', {
    class: 'editor', dataset: { editor: editor.mode },
    onsubmit: (e) => { e.preventDefault(); save(tree, editor); },
    onkeydown: (e) => { if (e.key === 'Escape') tree.closeEditor(); },
  },
  h('span', { class: 'editor-title' }, title),
  key, typeSelect, input,
  h('button', { type: 'submit', class: 'primary', dataset: { action: 'save' } }, 'Save'),
  h('button', { type: 'button', dataset: { action: 'cancel' }, onclick: () => tree.closeEditor() }, 'Cancel'),
  editor.error ? h('div', { class: 'editor-error', role: 'alert' }, editor.error) : null);
}

async function save(tree, editor) {
  try {
    const value = parseTyped(editor.type, editor.text);
    let written = editor.path;
    if (editor.mode === 'add') {
      const problem = keyProblem(editor.key);
      if (problem) throw new Error(problem);
      written = editor.path.concat(editor.key);
      await api.put(written, value);
    } else if (editor.mode === 'push') {
      const key = await api.push(editor.path, value);
      written = editor.path.concat(key);
      notify(`Pushed ${pathText(written)}.`, 'info');
    } else {
      await api.put(editor.path, value);
    }
    tree.editor = null;
    tree.wrote(written);
    tree.renderAll();
  } catch (error) {
    editor.error = error.message;
    tree.renderAll();
  }
}

/** Import: JSON (typed or from a file) replaces (PUT) or merges into (PATCH) the node. */
export async function importDialog(tree, path) {
  const text = h('textarea', { name: 'json', rows: 12, spellcheck: 'false', placeholder: '{"key": "value"}', 'aria-label': 'JSON to import' });
  const file = h('input', {
    type: 'file', accept: '.json,application/json', 'aria-label': 'JSON file',
    onchange: async () => { if (file.files[0]) text.value = await file.files[0].text(); },
  });
  const mode = h('select', { name: 'mode', 'aria-label': 'Import mode' },
    h('option', { value: 'replace' }, 'Replace the node (PUT)'),
    h('option', { value: 'merge' }, 'Merge into the node (PATCH)'));
  const content = h('div', { class: 'dialog-body' },
    h('p', {}, `Import JSON at ${pathText(path)}.`), file, text, h('label', {}, 'Mode ', mode));
  await modal('Import JSON', content, ['Import', 'Cancel'], {
    id: 'import-dialog',
    onSubmit: async () => {
      let value;
      try {
        value = JSON.parse(text.value);
      } catch (e) {
        throw new Error(`Not valid JSON: ${e.message}`);
      }
      if (mode.value === 'merge') {
        if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('Merging needs a JSON object.');
        await api.patch(path, value);
      } else {
        await api.put(path, value);
      }
      tree.wrote(path);
      notify(`Imported into ${pathText(path)}.`, 'info');
    },
  });
}

/** Export: the node as JSON (with priorities, `format=export`), to copy or download. */
export async function exportDialog(path) {
  let json;
  try {
    json = await api.getText(path, { format: 'export', print: 'pretty' });
  } catch (error) {
    notify(`Could not export ${pathText(path)}: ${error.message}`);
    return;
  }
  const name = `${api.session.ns || 'default'}${path.length ? '-' + path.join('-') : ''}.json`;
  const text = h('textarea', { rows: 16, readonly: true, spellcheck: 'false', 'aria-label': 'Exported JSON', value: json });
  const download = h('a', { class: 'button', download: name, dataset: { action: 'download' } }, `Download ${name}`);
  download.href = URL.createObjectURL(new Blob([json], { type: 'application/json' }));
  const content = h('div', { class: 'dialog-body' }, h('p', {}, `${pathText(path)} as JSON (priorities included).`), text, download);
  await modal('Export JSON', content, ['Close'], { id: 'export-dialog' });
  URL.revokeObjectURL(download.href);
}