// Times the native request table's load (benchmarks/RESULTS.md, issue 12): setRequests of 65,536 synthetic
// requests, 7 times, the CPU time of each call; LOADGEN_ADDON_PATH names another build to compare.
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const addon = require(process.env.LOADGEN_ADDON_PATH ?? 'new URL("../build/Release/loadgen.node", import.meta.url).pathname');
const N = 65536;
const line = Buffer.from('POST /v2/models/demo/infer HTTP/1.1\r\n');
const rest = Buffer.from('content-type: application/json\r\ncontent-length: 200\r\n\r\n' + 'x'.repeat(200));
const data = Buffer.alloc(N * (line.length + rest.length));
const layout = new Uint32Array(N * 4);
const indices = new Uint32Array(N);
let at = 0;
for (let i = 0; i < N; i++) {
  indices[i] = i;
  line.copy(data, at); layout[4 * i] = at; layout[4 * i + 1] = line.length; at += line.length;
  rest.copy(data, at); layout[4 * i + 2] = at; layout[4 * i + 3] = rest.length; at += rest.length;
}
const sut = new addon.NativeHttpSut({ nodes: [{ host: '127.0.0.1', port: 9, label: 'x' }], onResponses() {} });
const times = [];
for (let r = 0; r < 7; r++) {
  const c0 = process.cpuUsage(); const t0 = process.hrtime.bigint();
  sut.setRequests(indices, data, layout);
  const wall = Number(process.hrtime.bigint() - t0) / 1e6; const cpu = process.cpuUsage(c0);
  times.push({ wallMs: wall.toFixed(2), cpuMs: ((cpu.user + cpu.system) / 1000).toFixed(2) });
  sut.clearRequests();
}
console.log(JSON.stringify(times));
const m0 = process.memoryUsage().rss; sut.setRequests(indices, data, layout); console.log('rss growth MB', ((process.memoryUsage().rss - m0) / 1e6).toFixed(1));
sut.close();
