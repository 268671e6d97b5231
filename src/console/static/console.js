// The console's one script (CSP: script-src 'self', nothing inline): a copy button copies the value of
// the input it names and says so in its status region. Without script the key stays selectable text.
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.addEventListener('click', async () => {
    const input = document.getElementById(button.dataset.copy);
    const status = button.parentElement.querySelector('.copy-status');
    try {
      await navigator.clipboard.writeText(input.value);
      status.textContent = 'Copied';
    } catch {
      input.select();
      status.textContent = 'Copying was not allowed: the key is selected, copy it with the keyboard';
    }
  });
}
