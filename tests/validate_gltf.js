// Runs the Khronos glTF-Validator (the npm package gltf-validator) on .gltf / .glb files and fails
// unless each has no error and no warning.
//
//   node tests/validate_gltf.js FILE...
//
// The package is found through NODE_PATH or the global npm folder (`npm install -g gltf-validator`).
// Buffers a .gltf refers to are read from beside it. Images are read when their file exists; an
// image URI whose file is not there (a converted .X file names textures that are not shipped with
// it) is listed as not checked, and its IO_ERROR is not counted (a missing buffer is an error). Prints one line per file and
// `N passed, N failed` at the end; exits 1 when a file fails, 2 when the package is missing.
'use strict';
const fs = require('fs');
const path = require('path');

function loadValidator() {
  const candidates = ['gltf-validator'];
  try {
    const root = require('child_process').execSync('npm root -g', {encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']}).trim();
    candidates.push(path.join(root, 'gltf-validator'));
  } catch (e) { /* no npm: NODE_PATH only */ }
  for (const c of candidates) {
    try { return require(c); } catch (e) { /* next */ }
  }
  return null;
}

async function validate(validator, file) {
  const bytes = new Uint8Array(fs.readFileSync(file));
  const report = await validator.validateBytes(bytes, {
    uri: path.basename(file),
    maxIssues: 0,
    writeTimestamp: false,
    externalResourceFunction: (uri) => new Promise((resolve, reject) => {
      const full = path.resolve(path.dirname(file), decodeURIComponent(uri));
      fs.readFile(full, (err, data) => {
        if (err) {
          reject(err.toString());
        } else {
          resolve(new Uint8Array(data));
        }
      });
    }),
  });
  // A missing file counts unless it is an image's (a buffer must be there).
  const isImage = (m) => m.pointer && m.pointer.startsWith('/images/');
  const counted = report.issues.messages.filter((m) => m.severity <= 1 && !(m.code === 'IO_ERROR' && isImage(m)));
  const errors = counted.filter((m) => m.severity === 0).length;
  const warnings = counted.filter((m) => m.severity === 1).length;
  const notChecked = report.issues.messages.filter((m) => m.code === 'IO_ERROR' && isImage(m)).map((m) => m.pointer);
  return {errors, warnings, counted, notChecked, infos: report.issues.numInfos, hints: report.issues.numHints};
}

async function main() {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error('usage: node validate_gltf.js FILE...');
    process.exit(2);
  }
  const validator = loadValidator();
  if (!validator) {
    console.error('gltf-validator is not installed (npm install -g gltf-validator)');
    process.exit(2);
  }
  let passed = 0, failed = 0;
  for (const file of files) {
    let r;
    try {
      r = await validate(validator, file);
    } catch (e) {
      console.log(`${file}: the validator could not read it: ${e}`);
      ++failed;
      continue;
    }
    const ok = r.errors === 0 && r.warnings === 0;
    const extra = r.notChecked.length ? `; not checked (no such image file): ${r.notChecked.join(', ')}` : '';
    console.log(`${file}: ${r.errors} errors, ${r.warnings} warnings, ${r.infos} infos, ${r.hints} hints${extra}`);
    for (const m of r.counted) console.log(`  ${m.severity === 0 ? 'error' : 'warning'} ${m.code} ${m.pointer || ''}: ${m.message}`);
    if (ok) ++passed; else ++failed;
  }
  console.log(`gltf-validator ${validator.version()}: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main();
