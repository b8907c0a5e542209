// The data browser's rules.js, served at /_/rules.js (see BrowserAsset).
extension BrowserAsset {
    static let rulesJS = #"""
        // The rules panel: the namespace's rules document (/.settings/rules.json) to view and replace
        // (the server checks it and answers line and column of a mistake), and a read test: may this
        // location be read with no token, or with a given one (a user's ID token, say)?

        import * as api from './api.js';
        import { notify } from './dom.js';
        import { parsePath } from './values.js';

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
            const path = parsePath(form.querySelector('[name="path"]').value);
            const token = form.querySelector('[name="token"]').value.trim();
            const result = this.container.querySelector('#rules-test-result');
            try {
              await api.readAs(path, token);
              result.textContent = `Allowed: ${token ? 'this token' : 'a client with no token'} can read /${path.join('/')}.`;
              result.className = 'allowed';
            } catch (error) {
              result.textContent = `Denied: ${error.message}`;
              result.className = 'denied';
            }
          }
        }
        """#
}
