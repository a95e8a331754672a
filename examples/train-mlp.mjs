// @keel/mlp: train the reference MLP of DESIGN.md (784-512-512-10) for a few steps on the CPU device
// and read what the run did. `keel demo` is this with a progress bar and a summary.
import { trainMlp } from '@keel/mlp';

const r = await trainMlp({ device: 'cpu', steps: 30 }); // or 'webgpu', or a Device you opened
const first = r.losses[0];
const last = r.losses.at(-1);
if (!(last < first)) throw new Error(`loss did not go down: ${first} → ${last}`);
if (r.commands.replays !== 30) throw new Error(`expected 30 replays, got ${r.commands.replays}`);
if (!(r.residency.hostToDeviceBytes > 0)) throw new Error('nothing was uploaded');
console.log(
  `loss ${first.toFixed(4)} → ${last.toFixed(4)}, ${r.msPerStep.toFixed(2)} ms/step, ` +
    `${r.residency.hostToDeviceBytes} B uploaded, recorded once, replayed ${r.commands.replays}×`,
);
