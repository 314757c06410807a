// `node bench/heap-by-constructor.mjs <file.heapsnapshot> [top]`: where a V8 heap snapshot's memory
// is, by constructor (object nodes by their class name, the other kinds by their type: strings,
// code, arrays, closures' contexts, ...): self size and count, biggest first. What the snapshots of
// BENCH_LINKED_SNAPSHOT (bench/baileys-linked.bench.ts) are read with.
import { readFileSync } from 'node:fs'

const [file, topText = '25'] = process.argv.slice(2)
if (!file) {
  console.error('usage: node bench/heap-by-constructor.mjs <file.heapsnapshot> [top]')
  process.exit(2)
}
const snapshot = JSON.parse(readFileSync(file, 'utf8'))
const {
  node_fields: fields,
  node_types: [types],
} = snapshot.snapshot.meta
const stride = fields.length
const typeAt = fields.indexOf('type')
const nameAt = fields.indexOf('name')
const sizeAt = fields.indexOf('self_size')
const { nodes, strings } = snapshot
const groups = new Map()
let total = 0
for (let i = 0; i < nodes.length; i += stride) {
  const type = types[nodes[i + typeAt]]
  const size = nodes[i + sizeAt]
  total += size
  // Objects by class; everything else by kind (one line for all strings, not one per string value).
  const key = type === 'object' || type === 'native' ? `${strings[nodes[i + nameAt]]} (${type})` : `(${type})`
  const group = groups.get(key) ?? { size: 0, count: 0 }
  group.size += size
  group.count++
  groups.set(key, group)
}
const MB = 2 ** 20
console.log(`${file}: ${(total / MB).toFixed(1)} MB in ${nodes.length / stride} nodes`)
for (const [key, { size, count }] of [...groups].sort((a, b) => b[1].size - a[1].size).slice(0, Number(topText))) {
  console.log(`${(size / MB).toFixed(2).padStart(8)} MB ${((size / total) * 100).toFixed(1).padStart(5)}% ${String(count).padStart(9)}  ${key}`)
}
