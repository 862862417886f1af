// Reads .glb files with three.js (an independent glTF reader: its GLTFLoader and AnimationMixer)
// and compares the joints' world matrices with the poses the glTF write test recorded beside each
// file from its .X source (FILE.poses.json: the source's joint model matrices under the mirror, by
// glTF node, at the bind pose and at times of each animation). Fails unless every element is within
// 1e-5: absolute in the rotation and scale part, of the model's size in the translation.
//
//   node tests/three_poses.mjs FILE.glb...
//
// three is found through the global npm folder (`npm install -g three`) or NODE_PATH. Textures are
// not loaded (a converted file names images that are not shipped with it, and node has no image
// decoder). Prints one line per file and `N passed, N failed`; exits 1 when a file fails, 2 when
// three is missing.
import {execSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

async function loadThree() {
  const roots = (process.env.NODE_PATH || '').split(path.delimiter).filter((r) => r);
  try {
    roots.push(execSync('npm root -g', {encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']}).trim());
  } catch (e) { /* no npm: NODE_PATH only */ }
  for (const root of roots) {
    const dir = path.join(root, 'three');
    if (!fs.existsSync(path.join(dir, 'package.json'))) continue;
    const three = await import(pathToFileURL(path.join(dir, 'build', 'three.module.js')).href);
    const loaders = await import(pathToFileURL(path.join(dir, 'examples', 'jsm', 'loaders', 'GLTFLoader.js')).href);
    const version = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
    return {three, GLTFLoader: loaders.GLTFLoader, version};
  }
  return null;
}

async function check(lib, file) {
  const {three, GLTFLoader} = lib;
  const referenceFile = file.replace(/\.glb$/, '.poses.json');
  const reference = JSON.parse(fs.readFileSync(referenceFile, 'utf8'));
  const bytes = fs.readFileSync(file);
  const loader = new GLTFLoader();
  loader.register(() => ({name: 'keyblend_no_textures', loadTexture: () => Promise.resolve(null)}));
  const gltf = await loader.parseAsync(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength), '');
  const scene = gltf.scene;
  // glTF node index -> three.js object, and every object's own transform (restored before each pose).
  const byNode = new Map();
  const rest = [];
  scene.traverse((object) => {
    const a = gltf.parser.associations.get(object);
    if (a && a.nodes !== undefined) byNode.set(a.nodes, object);
    rest.push([object, object.position.clone(), object.quaternion.clone(), object.scale.clone()]);
  });
  let worst = 0, worstAt = '', failures = 0;
  for (const pose of reference.poses) {
    for (const [object, p, q, s] of rest) {
      object.position.copy(p);
      object.quaternion.copy(q);
      object.scale.copy(s);
    }
    let mixer = null;
    if (pose.animation >= 0) {
      mixer = new three.AnimationMixer(scene);
      const action = mixer.clipAction(gltf.animations[pose.animation]);
      action.setLoop(three.LoopOnce);
      action.clampWhenFinished = true;
      action.play();
      mixer.update(pose.time);
    }
    scene.updateMatrixWorld(true);
    pose.nodes.forEach((node, i) => {
      const object = byNode.get(node);
      if (!object) throw new Error(`node ${node} is not in three.js's scene`);
      const got = object.matrixWorld.elements, expect = pose.matrices[i];
      for (let col = 0; col < 4; ++col) {
        for (let row = 0; row < 3; ++row) {
          const e = Math.abs(got[col * 4 + row] - expect[col * 4 + row]) / (col === 3 ? reference.model_size : 1);
          if (e > worst) {
            worst = e;
            worstAt = `node ${node} '${object.name}', ${pose.animation < 0 ? 'bind pose' : `animation ${pose.animation} at ${pose.time} s`}, element [${col}][${row}]`;
          }
          if (e > 1e-5) ++failures;
        }
      }
    });
    if (mixer) {
      mixer.stopAllAction();
      mixer.uncacheRoot(scene);
    }
  }
  return {poses: reference.poses.length, animations: gltf.animations.length, worst, worstAt, failures};
}

async function main() {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error('usage: node three_poses.mjs FILE.glb...');
    process.exit(2);
  }
  const lib = await loadThree();
  if (!lib) {
    console.error('three is not installed (npm install -g three)');
    process.exit(2);
  }
  let passed = 0, failed = 0;
  for (const file of files) {
    let r;
    try {
      r = await check(lib, file);
    } catch (e) {
      console.log(`${file}: ${e && e.stack ? e.stack : e}`);
      ++failed;
      continue;
    }
    const ok = r.failures === 0;
    console.log(`${file}: ${r.poses} poses (${r.animations} animations), largest error ${r.worst.toExponential(2)}` +
                (r.worstAt ? ` (${r.worstAt})` : '') + (ok ? '' : `: ${r.failures} elements over 1e-5`));
    if (ok) ++passed; else ++failed;
  }
  console.log(`three.js ${lib.version}: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main();
