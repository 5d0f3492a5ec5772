// How many hashchange events reached a listener on the window after the kit's page script had
// seen them (rise_page.js drops those whose address is stale): the first call starts counting;
// every call resolves once none has arrived for 100 ms, so an event still queued from an
// earlier slide change is counted before the count is read
async () => {
  if (window.__hashchanges === undefined) {
    window.__hashchanges = 0;
    window.addEventListener('hashchange', () => { window.__hashchanges++; });
  }
  for (let last = -1, i = 0; i < 40 && last !== window.__hashchanges; i++) {
    last = window.__hashchanges;
    await new Promise((r) => setTimeout(r, 100));
  }
  return window.__hashchanges;
}
