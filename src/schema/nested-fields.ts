/**
 * Multipart bodies carry flat field names; clients that build them like a urlencoded form send
 * nested values as `buttons[0][type]`. `nestFields` folds such names into objects the way the
 * urlencoded parser (qs) does, so every body encoding means the same. A plain field wins over
 * bracketed ones of the same name; `__proto__`, `constructor` and `prototype` segments are dropped;
 * nesting stops at 5 levels.
 */
export function nestFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null)
  const bracketed: [string, string[], unknown][] = []
  for (const [name, value] of Object.entries(fields)) {
    const match = /^([^[\]]+)((?:\[[^[\]]*\])+)$/.exec(name)
    if (!match) {
      out[name] = value
      continue
    }
    const path = [...match[2].matchAll(/\[([^[\]]*)\]/g)].map(m => m[1])
    bracketed.push([match[1], path, value])
  }
  for (const [root, path, value] of bracketed) {
    if (FORBIDDEN.has(root) || path.length > MAX_DEPTH || path.some(p => FORBIDDEN.has(p))) continue
    if (root in out && !isNode(out[root])) continue
    let node = (out[root] ??= Object.create(null)) as Record<string, unknown>
    for (let i = 0; i < path.length; i++) {
      const key = path[i] === '' ? String(Object.keys(node).length) : path[i]
      if (i === path.length - 1) {
        if (!(key in node)) node[key] = value
      } else {
        if (!(key in node)) node[key] = Object.create(null)
        if (!isNode(node[key])) break
        node = node[key] as Record<string, unknown>
      }
    }
  }
  return out
}

// --- Internal helpers ---

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype'])
const MAX_DEPTH = 5

function isNode(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Buffer.isBuffer(value)
}
