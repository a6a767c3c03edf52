// Runs an exported generator in ONNX Runtime for Node on the latents of a .npy file and compares its
// images with those of another .npy file (`streetgan sample --latents ... --out FILE.npy`).
//   node onnx_runtime_check.js MODEL.onnx LATENTS.npy EXPECTED.npy
// Prints one JSON line: the session's input and output names, the output's dims and the largest
// absolute difference from the expected images.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

// A float32 C-order .npy file (format 1.0, as NumPy and `streetgan sample` write it).
function readNpy(path) {
  const bytes = fs.readFileSync(path);
  const headerLength = bytes.readUInt16LE(8);
  const header = bytes.subarray(10, 10 + headerLength).toString('latin1');
  if (!header.includes("'descr': '<f4'")) throw new Error(path + ': not float32');
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const data = bytes.subarray(10 + headerLength);
  return { shape, data: new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length)) };
}

async function main() {
  const [model, latentsPath, expectedPath] = process.argv.slice(2);
  const latents = readNpy(latentsPath), expected = readNpy(expectedPath);
  const session = await ort.InferenceSession.create(model);
  const outputs = await session.run({ z: new ort.Tensor('float32', latents.data, latents.shape) });
  const image = outputs.image;
  let largest = image.data.length === expected.data.length ? 0 : Infinity;
  for (let i = 0; i < image.data.length && i < expected.data.length; ++i)
    largest = Math.max(largest, Math.abs(image.data[i] - expected.data[i]));
  console.log(JSON.stringify({ inputs: session.inputNames, outputs: session.outputNames, dims: image.dims,
                               expected: expected.shape, largest_difference: largest }));
}

main().catch((error) => { console.error(String(error)); process.exit(1); });
