/** Deep JSON equality, the "equal" of the storage port's atomic steps: whether `a` and `b` have the same JSON form (keys in any order; undefined, functions and symbols are no key, and null as array items). A walk, not JSON texts: a record's long strings (a webhook's body) are compared once, not escaped and copied per side. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!jsonEqual(arrayItem(a[i]), arrayItem(b[i]))) return false
    return true
  }
  if (Array.isArray(b)) return false
  const left = a as Record<string, unknown>
  const right = b as Record<string, unknown>
  let keys = 0
  for (const key of Object.keys(left)) {
    const value = left[key]
    if (!inJson(value)) continue
    keys++
    if (!Object.hasOwn(right, key) || !jsonEqual(value, right[key])) return false
  }
  for (const key of Object.keys(right)) if (inJson(right[key])) keys--
  return keys === 0
}

// --- Internal helpers ---

function inJson(value: unknown): boolean {
  return value !== undefined && typeof value !== 'function' && typeof value !== 'symbol'
}

function arrayItem(value: unknown): unknown {
  return inJson(value) ? value : null
}
