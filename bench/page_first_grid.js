// Milliseconds from opening a page in a fresh headless Chromium to its first grid of scenes, for
// bench_publish.py: `node page_first_grid.js URL site|gallery`. site: a page of `streetgan publish`
// (body[data-state] becomes "ready" once its grid is drawn); gallery: `streetgan serve`'s page at /
// (its grid image loaded: img#grid[data-loaded=yes]). Prints one JSON line.
const puppeteer = require('puppeteer-core');

(async () => {
  const [url, kind] = process.argv.slice(2);
  const browser = await puppeteer.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
                                           args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  try {
    const page = await browser.newPage();
    const started = Date.now();
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    const ready = kind === 'site'
      ? () => document.body.dataset.state !== 'loading'
      : () => document.getElementById('grid').getAttribute('data-loaded') !== null;
    await page.waitForFunction(ready, { timeout: 300000, polling: 10 });
    const ms = Date.now() - started;
    const state = await page.evaluate((k) => (k === 'site' ? document.body.dataset.state
                                                              : document.getElementById('grid').getAttribute('data-loaded')), kind);
    console.log(JSON.stringify({ ms, state }));
  } finally {
    await browser.close();
  }
})();
