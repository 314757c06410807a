/**
 * Multipart bodies carry flat field names; clients that build them like a urlencoded form send
 * nested values as `buttons[0][type]`. `nestFields` folds such names into objects the way the
 * urlencoded parser (qs) does, so every body encoding means the same: a name given more than once
 * (a plain field repeated, or plain and bracketed together) is, as qs makes it, a list of its
 * values in order (a bracketed list's items spread in it), which a text field refuses in either
 * encoding. `__proto__`, `constructor` and `prototype` segments are dropped; nesting stops at 5 levels.
 */
export function nestFields(fields: Iterable<readonly [string, unknown]>): Record<string, unknown> {
  // Each name's values in order: a plain value, or the one node its bracketed fields fill.
  const parts = new Map<string, unknown[]>()
  const nodes = new Map<string, Record<string, unknown>>()
  for (const [name, value] of fields) {
    const match = /^([^[\]]+)((?:\[[^[\]]*\])+)$/.exec(name)
    if (!match) {
      listOf(parts, name).push(value)
      continue
    }
    const [, root, brackets] = match
    const path = [...brackets.matchAll(/\[([^[\]]*)\]/g)].map(m => m[1])
    if (FORBIDDEN.has(root) || path.length > MAX_DEPTH || path.some(p => FORBIDDEN.has(p))) continue
    let node: Record<string, unknown> | undefined = nodes.get(root)
    if (!node) {
      node = Object.create(null) as Record<string, unknown>
      nodes.set(root, node)
      listOf(parts, root).push(node)
    }
    for (let i = 0; i < path.length; i++) {
      const key: string = path[i] === '' ? String(Object.keys(node).length) : path[i]
      if (i === path.length - 1) {
        if (!(key in node)) node[key] = value
      } else {
        if (!(key in node)) node[key] = Object.create(null)
        if (!isNode(node[key])) break
        node = node[key] as Record<string, unknown>
      }
    }
  }
  const out: Record<string, unknown> = Object.create(null)
  for (const [name, values] of parts)
    out[name] = values.length === 1 ? values[0] : values.flatMap(v => (nodes.get(name) === v && isList(v) ? Object.values(v as object) : [v]))
  return out
}

// --- Internal helpers ---

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype'])
const MAX_DEPTH = 5

function listOf(parts: Map<string, unknown[]>, name: string): unknown[] {
  let list = parts.get(name)
  if (!list) parts.set(name, (list = []))
  return list
}

function isNode(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Buffer.isBuffer(value)
}

/** A node qs would make a list (`name[]`, `name[0]`): its keys 0, 1, 2, … */
function isList(node: unknown): boolean {
  return Object.keys(node as object).every((key, i) => key === String(i))
}
