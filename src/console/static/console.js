// The console's one script (CSP: script-src 'self', nothing inline): a copy button copies the value of
// the input it names (a key shown once), or the text of the element it names (a porting guide's
// example), and says so in its status region. Without script both stay selectable text.
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.addEventListener('click', async () => {
    const target = document.getElementById(button.dataset.copy);
    const status = button.parentElement.querySelector('.copy-status');
    const isInput = target.tagName === 'INPUT';
    try {
      await navigator.clipboard.writeText(isInput ? target.value : target.textContent);
      status.textContent = 'Copied';
    } catch {
      if (isInput) target.select();
      else document.getSelection().selectAllChildren(target);
      status.textContent = `Copying was not allowed: the ${isInput ? 'key' : 'text'} is selected, copy it with the keyboard`;
    }
  });
}
