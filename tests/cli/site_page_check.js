// Opens a page `streetgan publish` wrote in a headless browser (Puppeteer over Debian's chromium,
// or firefox-esr with BROWSER=firefox) and prints one JSON line of what it saw, for tst_publish:
//   [BROWSER=firefox] node site_page_check.js URL SHOT.png [EXPECTED.npy]
// With EXPECTED.npy (streetgan sample's float32 images of the page's first latents) the page must
// become ready: its grid is compared with them, a walk of the first two scenes is played, the
// saved walk and the first direction slider are tried and a phone-sized screenshot is taken too.
// Without, the page's state and message are reported as they are (a broken model's page).
const fs = require('fs');
const puppeteer = require('puppeteer-core');

function readNpy(path) {
  const bytes = fs.readFileSync(path);
  const headerLength = bytes.readUInt16LE(8);
  const header = bytes.subarray(10, 10 + headerLength).toString('latin1');
  const shape = header.match(/\(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const start = 10 + headerLength;
  const data = new Float32Array(bytes.buffer.slice(bytes.byteOffset + start, bytes.byteOffset + bytes.length));
  return { shape, data };
}

// The grid's images as RGBA bytes, read back through a canvas.
function gridPixels(page) {
  return page.evaluate(() => Array.from(document.querySelectorAll('#grid img')).map((img) => {
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth, canvas.height = img.naturalHeight;
    const context = canvas.getContext('2d');
    context.drawImage(img, 0, 0);
    return Array.from(context.getImageData(0, 0, canvas.width, canvas.height).data);
  }));
}

// The largest difference, in 1/255 steps, between the grid and round((x + 1) · 127.5) of the images.
function largestDifference(grid, expected) {
  const [n, nc, h, w] = expected.shape, plane = h * w;
  let largest = 0;
  for (let i = 0; i < Math.min(n, grid.length); ++i)
    for (let p = 0; p < plane; ++p)
      for (let c = 0; c < 3; ++c) {
        const x = Math.min(1, Math.max(-1, expected.data[(i * nc + Math.min(c, nc - 1)) * plane + p]));
        largest = Math.max(largest, Math.abs(grid[i][p * 4 + c] - Math.round((x + 1) * 127.5)));
      }
  return largest;
}

const walkCanvas = (page) => page.evaluate(() => document.getElementById('walk-canvas').toDataURL());

async function waitForFrameAfter(page, frame) {
  await page.waitForFunction((f) => document.body.dataset.frame !== undefined && Number(document.body.dataset.frame) > f,
                             { timeout: 120000 }, frame);
}

async function checkWalks(page, report) {
  await page.click('#grid .scene:nth-child(1)');
  await page.click('#grid .scene:nth-child(2)');
  await page.click('#play');
  await waitForFrameAfter(page, 0);
  const first = await walkCanvas(page);
  await waitForFrameAfter(page, 2);
  report.walk_frames_change = first !== (await walkCanvas(page));
  report.walk_caption = await page.$eval('#walk-caption', (e) => e.textContent);
  if (await page.$eval('#play-saved', (e) => !e.hidden)) {
    await page.click('#play-saved');
    await page.waitForFunction(() => /of \d+$/.test(document.getElementById('walk-caption').textContent) &&
                               document.getElementById('status').textContent === '', { timeout: 120000 });
    report.saved_walk_caption = await page.$eval('#walk-caption', (e) => e.textContent);
  }
}

async function checkDirection(page, report) {
  const slider = await page.$('#directions input');
  report.directions = (await page.$$('#directions input')).length;
  if (!slider) return;
  const before = await page.$eval('#grid img', (img) => img.src);
  await slider.evaluate((s) => { s.value = s.max; s.dispatchEvent(new Event('change')); });
  await page.waitForFunction((src) => document.querySelector('#grid img').src !== src, { timeout: 120000 }, before);
  report.direction_changes_grid = true;
}

(async () => {
  const [url, shot, expectedPath] = process.argv.slice(2);
  const firefox = process.env.BROWSER === 'firefox';
  const browser = await puppeteer.launch(firefox
    ? { browser: 'firefox', executablePath: '/usr/bin/firefox-esr', headless: true }
    : { executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  const report = { errors: [] };
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1100, height: 900 });
    page.on('console', (m) => { if (m.type() === 'error') report.errors.push(m.text()); });
    page.on('pageerror', (e) => report.errors.push(String(e)));
    const started = Date.now();
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForFunction(() => document.body.dataset.state !== 'loading', { timeout: 180000 });
    report.first_grid_ms = Date.now() - started;
    report.state = await page.evaluate(() => document.body.dataset.state);
    report.status = await page.$eval('#status', (e) => e.textContent);
    if (report.state === 'ready' && expectedPath) {
      const grid = await gridPixels(page);
      report.scenes = grid.length;
      report.largest_difference = largestDifference(grid, readNpy(expectedPath));
      await checkDirection(page, report);
      await checkWalks(page, report);
    }
    await page.screenshot({ path: shot, fullPage: true });
    if (report.state === 'ready') {
      // A phone's width (Chromium also emulates a phone, which reloads the page).
      await page.setViewport({ width: 390, height: 844, isMobile: !firefox });
      await page.waitForFunction(() => document.body.dataset.state === 'ready', { timeout: 180000 });
      report.phone_overflows = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
      await page.screenshot({ path: shot.replace(/\.png$/, '-phone.png'), fullPage: true });
    }
  } catch (error) {
    report.failure = String(error);
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(report));
})();
