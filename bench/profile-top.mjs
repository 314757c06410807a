// `node bench/profile-top.mjs <file.cpuprofile> [n]`: the functions with the most self time (and the
// files with the most self time) in a V8 CPU profile, as written by `node --cpu-prof`.
import { readFileSync } from 'node:fs'

const [file, limit = '30'] = process.argv.slice(2)
// The checkout's own files by their path in it (dist/src/..., bench/...), whichever checkout or worktree ran them.
const checkout = /^file:\/\/.*?\/(?=(dist|src|adapters|bench)\/)/
const profile = JSON.parse(readFileSync(file, 'utf8'))
const byId = new Map(profile.nodes.map(node => [node.id, node]))
const self = new Map()
const deltas = profile.timeDeltas
const all = deltas.reduce((a, b) => a + b, 0)
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (deltas[i] ?? 0)))
// Percentages are of the busy time: the samples where the process was not idle.
const idleIds = profile.nodes.filter(node => node.callFrame.functionName === '(idle)').map(node => node.id)
const total = all - idleIds.reduce((sum, id) => sum + (self.get(id) ?? 0), 0)
for (const id of idleIds) self.delete(id)
const byFunction = new Map()
const byFile = new Map()
for (const [id, time] of self) {
  const { callFrame } = byId.get(id)
  const where = callFrame.url.replace(/^.*node_modules\//, '~/').replace(checkout, '')
  const key = `${callFrame.functionName || '(anonymous)'} ${where}:${callFrame.lineNumber + 1}`
  byFunction.set(key, (byFunction.get(key) ?? 0) + time)
  const pkg = where.startsWith('~/')
    ? where
        .split('/')
        .slice(0, where.startsWith('~/@') ? 3 : 2)
        .join('/')
    : where || '(native)'
  byFile.set(pkg, (byFile.get(pkg) ?? 0) + time)
}
// Inclusive time of the project's own functions (src/, adapters/, or their build under dist/): self plus everything they call.
const inclusive = new Map()
const totalOf = node => {
  node.total ??= (self.get(node.id) ?? 0) + (node.children ?? []).reduce((sum, child) => sum + totalOf(byId.get(child)), 0)
  return node.total
}
const walk = (node, onStack) => {
  const { callFrame } = node
  const where = callFrame.url.replace(checkout, '')
  const key = `${callFrame.functionName || '(anonymous)'} ${where}:${callFrame.lineNumber + 1}`
  const own = /^(dist\/)?(src|adapters)\//.test(where) && !onStack.has(key)
  if (own) inclusive.set(key, (inclusive.get(key) ?? 0) + totalOf(node))
  const next = own ? new Set([...onStack, key]) : onStack
  for (const child of node.children ?? []) walk(byId.get(child), next)
}
walk(profile.nodes[0], new Set())
const show = map =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(limit))
    .map(([k, t]) => `${((t / total) * 100).toFixed(1).padStart(5)}%  ${k}`)
    .join('\n')
console.log(
  `total ${(all / 1e6).toFixed(1)} s, busy ${(total / 1e6).toFixed(1)} s (percentages of the busy time)\n\nby function (self):\n${show(byFunction)}\n\nby file or package (self):\n${show(byFile)}\n\nproject functions (inclusive):\n${show(inclusive)}`,
)
