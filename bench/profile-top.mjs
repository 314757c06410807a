// `node bench/profile-top.mjs <file.cpuprofile> [n] [--requests N]`: where the time went in a V8 CPU
// profile, as written by `node --cpu-prof` (BENCH_PROFILE): the functions with the most self time, the
// same self time summed by package (a node_modules package, Node's own JavaScript, the project's
// folders, and natives such as `writev` or the garbage collector by name), and the inclusive time of
// the project's own functions (src/, adapters/ or their build under dist/: self plus everything they
// call). Shares are of the busy time (the profile's `(idle)` left out; its share is printed apart).
// With `--requests N` (the requests the process answered while profiled: the send-text bench prints
// it) every line also gives the µs of CPU per request.
import { readFileSync } from 'node:fs'

const args = process.argv.slice(2)
const requestsAt = args.indexOf('--requests')
const requests = requestsAt >= 0 ? Number(args.splice(requestsAt, 2)[1]) : 0
const [file, limit = '30'] = args
const profile = JSON.parse(readFileSync(file, 'utf8'))
const byId = new Map(profile.nodes.map(node => [node.id, node]))
const self = new Map()
const deltas = profile.timeDeltas
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (deltas[i] ?? 0)))
const total = deltas.reduce((a, b) => a + b, 0)
const idle = [...self].filter(([id]) => byId.get(id).callFrame.functionName === '(idle)').reduce((sum, [, time]) => sum + time, 0)
const busy = total - idle

/** A frame's place: `~/pkg/...` in node_modules, `dist/src/...` or `src/...` in the project (any checkout), else as V8 gives it. */
const placeOf = url => url.replace(/^.*node_modules\//, '~/').replace(/^file:\/\/.*?\/(?=(dist\/)?(src|adapters|bench|test)\/)/, '')
const keyOf = ({ functionName, url, lineNumber }) => `${functionName || '(anonymous)'} ${placeOf(url)}:${lineNumber + 1}`
const isOwn = place => /^(dist\/)?(src|adapters)\//.test(place)

/** The package a frame's self time is summed under. */
function packageOf({ functionName, url }) {
  const place = placeOf(url)
  if (place === '') return `(native) ${functionName}`
  if (place.startsWith('~/'))
    return place
      .split('/')
      .slice(0, place.startsWith('~/@') ? 3 : 2)
      .join('/')
  if (place.startsWith('node:')) return 'node (its JavaScript)'
  if (isOwn(place))
    return `zapgate ${place
      .replace(/^dist\//, '')
      .split('/')
      .slice(0, -1)
      .join('/')}`
  return place
}

const byFunction = new Map()
const byPackage = new Map()
const add = (map, key, time) => map.set(key, (map.get(key) ?? 0) + time)
for (const [id, time] of self) {
  const { callFrame } = byId.get(id)
  if (callFrame.functionName === '(idle)') continue
  add(byFunction, keyOf(callFrame), time)
  add(byPackage, packageOf(callFrame), time)
}

// Inclusive time of the project's own functions: a frame counts once however deep it recurses.
const inclusive = new Map()
const totalOf = node => {
  node.total ??= (self.get(node.id) ?? 0) + (node.children ?? []).reduce((sum, child) => sum + totalOf(byId.get(child)), 0)
  return node.total
}
const walk = (node, onStack) => {
  const key = keyOf(node.callFrame)
  const own = isOwn(placeOf(node.callFrame.url)) && !onStack.has(key)
  if (own) add(inclusive, key, totalOf(node))
  const next = own ? new Set([...onStack, key]) : onStack
  for (const child of node.children ?? []) walk(byId.get(child), next)
}
walk(profile.nodes[0], new Set())

const perRequest = time => (requests > 0 ? `${(time / requests).toFixed(1).padStart(7)} µs  ` : '')
const show = map =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(limit))
    .map(([k, t]) => `${((t / busy) * 100).toFixed(1).padStart(5)}%  ${perRequest(t)}${k}`)
    .join('\n')
console.log(
  [
    `total ${(total / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s (idle ${((idle / total) * 100).toFixed(0)} %)` +
      (requests > 0 ? `, ${requests} requests: ${(busy / requests).toFixed(1)} µs of busy time per request` : ''),
    `by function (self, % of busy):\n${show(byFunction)}`,
    `by package (self):\n${show(byPackage)}`,
    `project functions (inclusive):\n${show(inclusive)}`,
  ].join('\n\n'),
)
