// The rules panel: the namespace's rules document (/.settings/rules.json) to view and replace
// (the server checks it and answers line and column of a mistake), and the simulator: may this
// read or write happen, as this user (or signed out), by these rules?

import * as api from './api.js';
import { notify } from './dom.js';

export class RulesPanel {
  /** @param onSaved called after new rules are in force (streams they now refuse were cancelled) */
  constructor(container, onSaved) {
    this.container = container;
    this.onSaved = onSaved;
    this.text = container.querySelector('#rules-text');
    this.state = container.querySelector('#rules-state');
    container.querySelector('[data-action="reload-rules"]').addEventListener('click', () => this.load());
    container.querySelector('[data-action="save-rules"]').addEventListener('click', () => this.save());
    container.querySelector('#rules-test').addEventListener('submit', (e) => {
      e.preventDefault();
      this.test();
    });
    this.text.addEventListener('input', () => this.show('edited', 'Edited: not saved (the rules in force are unchanged).'));
    const operation = container.querySelector('#rules-test [name="operation"]');
    const showData = () => { container.querySelector('#rules-test .wide').hidden = operation.value === 'read'; };
    operation.addEventListener('change', showData);
    showData();
  }

  show(kind, message) {
    this.state.textContent = message;
    this.state.className = `rules-state ${kind}`;
  }

  async load() {
    try {
      this.text.value = await api.getRules();
      this.show('ok', 'These rules are in force.');
    } catch (error) {
      this.show('error', `Could not read the rules: ${error.message}`);
    }
  }

  async save() {
    try {
      await api.putRules(this.text.value);
      this.show('ok', 'Saved: these rules are in force now.');
      this.onSaved();
      notify('Rules saved.', 'info');
    } catch (error) {
      this.show('error', error.message);
    }
  }

  async test() {
    const form = this.container.querySelector('#rules-test');
    const field = (name) => form.querySelector(`[name="${name}"]`);
    const result = this.container.querySelector('#rules-test-result');
    const show = (className, text) => {
      result.className = className;
      result.textContent = text;
    };
    const request = { operation: field('operation').value, path: field('path').value || '/' };
    try {
      const auth = field('auth').value.trim();
      request.auth = auth ? JSON.parse(auth) : null;
    } catch (e) {
      show('denied', `As: the user's claims must be JSON, such as {"sub": "alice"} (${e.message}).`);
      return;
    }
    if (request.operation !== 'read') {
      try {
        request.data = JSON.parse(field('data').value);
      } catch (e) {
        show('denied', `Data: not valid JSON (${e.message}).`);
        return;
      }
    }
    if (field('draft').checked) request.rules = this.text.value;
    try {
      const verdict = await api.simulateRules(request);
      const rule = verdict.rule
        ? ` by ${verdict.rule.rule} (line ${verdict.rule.line}, column ${verdict.rule.column}) at ${verdict.rule.location}: ${verdict.rule.expression}`
        : verdict.allowed ? '' : ': no rule grants it';
      show(verdict.allowed ? 'allowed' : 'denied', `${verdict.allowed ? 'Allowed' : 'Denied'}${rule}`);
      if (verdict.rule) this.select(verdict.rule.line);
    } catch (error) {
      show('denied', `Could not simulate: ${error.message}`);
    }
  }

  /** Selects line `line` (1-based) of the rules text, when that is the document judged. */
  select(line) {
    const lines = this.text.value.split('\n');
    if (line < 1 || line > lines.length) return;
    const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
    this.text.setSelectionRange(start, start + lines[line - 1].length);
  }
}