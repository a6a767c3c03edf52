// The published page: the generator (model.onnx) run in the visitor's browser by ONNX Runtime Web,
// a grid of scenes, slerp walks through the scenes clicked, sliders for the run's directions.
// scenes.json (written by `streetgan publish`, docs/publish.md) holds what the page shows first.
// body[data-state] is loading, ready or failed, and body[data-frame] the walk's frame: for tests.
import * as ort from './ort/ort.webgpu.min.mjs';

const $ = (id) => document.getElementById(id);
// offsets: a Map, so that a direction named like an Object property ("constructor") is no property.
const state = { site: null, session: null, latents: [], selected: [], frames: [], frame: 0, timer: null, offsets: new Map() };

function fail(message) {
  $('status').textContent = message;
  $('status').className = 'error';
  document.body.dataset.state = 'failed';
}

// A failure after the page was ready: said on the page, which stays usable.
function failLater(error) {
  $('status').textContent = `Could not render: ${error.message || error}`;
  $('status').className = 'error';
}

async function fetchFile(name) {
  const response = await fetch(name);
  if (!response.ok) throw new Error(`${name}: ${response.status} ${response.statusText}`);
  return response;
}

// Standard normal numbers (Box-Muller) from the browser's cryptographic generator.
function normalLatent(nz) {
  const u = new Uint32Array(nz + (nz % 2));
  crypto.getRandomValues(u);
  const z = new Float32Array(nz);
  for (let i = 0; i < nz; i += 2) {
    const a = (u[i] + 1) / 4294967297, b = (u[i + 1] + 1) / 4294967297;
    const r = Math.sqrt(-2 * Math.log(a));
    z[i] = r * Math.cos(2 * Math.PI * b);
    if (i + 1 < nz) z[i + 1] = r * Math.sin(2 * Math.PI * b);
  }
  return z;
}

function slerp(a, b, t) {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; ++i) { dot += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i]; }
  const omega = Math.acos(Math.min(1, Math.max(-1, dot / Math.sqrt(na * nb))));
  const out = new Float32Array(a.length);
  const s = Math.sin(omega);
  for (let i = 0; i < a.length; ++i)
    out[i] = s < 1e-6 ? a[i] + (b[i] - a[i]) * t : (Math.sin((1 - t) * omega) * a[i] + Math.sin(t * omega) * b[i]) / s;
  return out;
}

// A latent moved along every direction by its slider's amount.
function withOffsets(z) {
  const out = Float32Array.from(z);
  for (const direction of state.site.directions) {
    const amount = state.offsets.get(direction.name) || 0;
    if (amount) for (let i = 0; i < out.length; ++i) out[i] += amount * direction.vector[i];
  }
  return out;
}

// Images (RGBA ImageData) for latents, 16 at a time; values in [-1, 1] become round((x + 1) * 127.5).
async function render(latents) {
  const { nz, img_size: size } = state.site, out = [];
  for (let begin = 0; begin < latents.length; begin += 16) {
    const batch = latents.slice(begin, begin + 16), data = new Float32Array(batch.length * nz);
    batch.forEach((z, i) => data.set(withOffsets(z), i * nz));
    const result = await state.session.run({ z: new ort.Tensor('float32', data, [batch.length, nz]) });
    const pixels = result.image.data, plane = size * size, nc = state.site.nc;
    for (let n = 0; n < batch.length; ++n) {
      const image = new ImageData(size, size);
      for (let p = 0; p < plane; ++p) {
        for (let c = 0; c < 3; ++c) {  // a grayscale model's one plane is shown in all three
          const x = Math.min(1, Math.max(-1, pixels[(n * nc + Math.min(c, nc - 1)) * plane + p]));
          image.data[p * 4 + c] = Math.round((x + 1) * 127.5);
        }
        image.data[p * 4 + 3] = 255;
      }
      out.push(image);
    }
  }
  return out;
}

function toDataUrl(image) {
  const canvas = document.createElement('canvas');
  canvas.width = image.width, canvas.height = image.height;
  canvas.getContext('2d').putImageData(image, 0, 0);
  return canvas.toDataURL('image/png');
}

async function showGrid() {
  const images = await render(state.latents);
  const grid = $('grid');
  grid.replaceChildren(...images.map((image, i) => {
    const button = document.createElement('button');
    button.className = 'scene' + (state.selected.includes(i) ? ' selected' : '');
    button.setAttribute('aria-label', `Scene ${i + 1}`);
    button.innerHTML = `<img alt="Scene ${i + 1}" src="${toDataUrl(image)}"><span class="order"></span>`;
    button.querySelector('.order').textContent = state.selected.includes(i) ? state.selected.indexOf(i) + 1 : '';
    button.addEventListener('click', () => toggle(i));
    return button;
  }));
  $('play').disabled = state.selected.length < 2;
  $('download').disabled = state.selected.length === 0 && !state.timer;
}

function toggle(i) {
  const at = state.selected.indexOf(i);
  if (at >= 0) state.selected.splice(at, 1); else state.selected.push(i);
  showGrid().catch(failLater);
}

// The clicked scenes as a loop: the last segment returns to the first scene.
function clickedWalk() {
  const keys = state.selected.map((i) => state.latents[i]), steps = state.site.frames_per_key, path = [];
  for (let k = 0; k < keys.length; ++k)
    for (let f = 0; f < steps; ++f) path.push(slerp(keys[k], keys[(k + 1) % keys.length], f / steps));
  return path;
}

async function playWalk(path) {
  stopWalk();
  $('status').textContent = `Rendering ${path.length} frames…`;
  state.frames = await render(path);
  $('status').textContent = '';
  $('walk').hidden = false;
  const canvas = $('walk-canvas');
  canvas.width = canvas.height = state.site.img_size;
  state.frame = 0;
  const tick = () => {
    canvas.getContext('2d').putImageData(state.frames[state.frame], 0, 0);
    $('walk-caption').textContent = `Frame ${state.frame + 1} of ${state.frames.length}`;
    document.body.dataset.frame = String(state.frame);
    state.frame = (state.frame + 1) % state.frames.length;
    state.timer = setTimeout(tick, 1000 / (state.site.fps * Number($('speed').value)));
  };
  tick();
  $('download').disabled = false;
}

function stopWalk() {
  if (state.timer) clearTimeout(state.timer);
  state.timer = null;
}

function downloadFrame() {
  const link = document.createElement('a');
  if (state.timer) {
    link.href = $('walk-canvas').toDataURL('image/png');
    link.download = `walk-frame-${state.frame}.png`;
  } else {
    link.href = document.querySelectorAll('#grid img')[state.selected[0]].src;
    link.download = `scene-${state.selected[0] + 1}.png`;
  }
  link.click();
}

function buildDirections() {
  for (const direction of state.site.directions) {
    const label = document.createElement('label');
    label.textContent = direction.name;
    const slider = Object.assign(document.createElement('input'), { type: 'range', min: -direction.range, max: direction.range, step: 0.1, value: 0 });
    slider.setAttribute('aria-label', direction.name);
    slider.addEventListener('change', () => { state.offsets.set(direction.name, Number(slider.value)); showGrid().catch(failLater); });
    label.append(slider);
    $('directions').append(label);
  }
}

async function openModel() {
  ort.env.wasm.wasmPaths = new URL('./ort/', import.meta.url).href;
  ort.env.wasm.numThreads = self.crossOriginIsolated ? Math.min(4, navigator.hardwareConcurrency || 1) : 1;
  const bytes = new Uint8Array(await (await fetchFile(state.site.model)).arrayBuffer());
  const providers = 'gpu' in navigator ? ['webgpu', 'wasm'] : ['wasm'];
  return ort.InferenceSession.create(bytes, { executionProviders: providers });
}

async function main() {
  try {
    state.site = await (await fetchFile('scenes.json')).json();
  } catch (error) {
    return fail(`The page's scenes.json could not be read (${error.message}).`);
  }
  const site = state.site;
  document.title = $('title').textContent = site.title;
  $('about').textContent = `${site.img_size}×${site.img_size} street scenes from the run ${site.run} (step ${site.step}, ${site.images_seen} images seen).`;
  try {
    state.session = await openModel();
  } catch (error) {
    return fail(`The model (${site.model}) could not be loaded: ${error.message || error}`);
  }
  state.latents = site.latents.map((z) => Float32Array.from(z));
  buildDirections();
  await showGrid();
  $('status').textContent = '';
  $('new-scenes').disabled = $('play-saved').disabled = false;
  $('new-scenes').addEventListener('click', () => {
    state.latents = state.latents.map(() => normalLatent(site.nz));
    state.selected = [];
    showGrid().catch(failLater);
  });
  $('play').addEventListener('click', () => playWalk(clickedWalk()).catch(failLater));
  if (site.walk) {
    $('play-saved').hidden = false;
    $('play-saved').textContent = `Play Saved Walk (${site.walk.name})`;
    $('play-saved').addEventListener('click', () => playWalk(site.walk.frames.map((z) => Float32Array.from(z))).catch(failLater));
  }
  $('download').addEventListener('click', downloadFrame);
  $('speed').addEventListener('input', () => { $('speed-value').textContent = `${$('speed').value}×`; });
  document.body.dataset.state = 'ready';
}

main().catch((error) => fail(`The page failed: ${error.message || error}`));
