// Small DOM helpers: element building, highlights, messages and modal dialogs.

/** `h('button', {class: 'x', onclick}, 'text', child…)`: an element. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else if (name === 'value') element.value = value;
    else element.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** Briefly highlights an element (a changed value). */
export function flash(element, kind = 'changed') {
  if (!element) return;
  element.classList.remove('flash-changed', 'flash-removed');
  void element.offsetWidth; // restart the animation
  element.classList.add(`flash-${kind}`);
}

/** Shows a message at the bottom of the page: `kind` 'error' or 'info'. */
export function notify(message, kind = 'error') {
  const box = document.getElementById('messages');
  const item = h('div', { class: `message ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, message,
    h('button', { class: 'close', title: 'Dismiss', 'aria-label': 'Dismiss', onclick: () => item.remove() }, '×'));
  box.append(item);
  if (kind !== 'error') setTimeout(() => item.remove(), 4000);
  return item;
}

/**
 * A modal dialog with `content` and buttons; resolves with the label of the button pressed
 * (null for Escape). `onSubmit(label)` may throw to keep it open (its message is shown).
 */
export function modal(title, content, buttons, { onSubmit, id } = {}) {
  return new Promise((resolve) => {
    const error = h('p', { class: 'dialog-error', role: 'alert' });
    const dialog = h('dialog', { class: 'modal', id },
      h('form', { method: 'dialog' },
        h('h2', {}, title),
        content,
        error,
        h('div', { class: 'buttons' }, buttons.map((label, i) =>
          h('button', { value: label, class: i === 0 ? 'primary' : '', dataset: { button: label } }, label)))));
    dialog.addEventListener('submit', async (event) => {
      event.preventDefault();
      const label = event.submitter?.value ?? buttons[0];
      if (onSubmit && label === buttons[0]) {
        try {
          error.textContent = '';
          await onSubmit(label);
        } catch (e) {
          error.textContent = e.message;
          return;
        }
      }
      dialog.close(label);
    });
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(dialog.returnValue || null);
    });
    document.body.append(dialog);
    dialog.showModal();
    dialog.querySelector('input, textarea, select')?.focus();
  });
}

/** Asks a yes/no question; resolves true for `yes`. */
export async function confirmDialog(title, message, yes = 'Delete') {
  return (await modal(title, h('p', {}, message), [yes, 'Cancel'], { id: 'confirm-dialog' })) === yes;
}