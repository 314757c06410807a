/** Deep JSON equality, the "equal" of the storage port's atomic steps: whether `a` and `b` have the same JSON form (keys in any order; undefined, functions and symbols are no key, and null as array items; a number JSON cannot hold is null; an object with toJSON is what it gives, a Date its text). A walk, not JSON texts: a record's long strings (a webhook's body) are compared once, not escaped and copied per side. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if ((a = jsonForm(a)) === (b = jsonForm(b))) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!jsonEqual(jsonForm(a[i]) ?? null, jsonForm(b[i]) ?? null)) return false
    return true
  }
  if (Array.isArray(b)) return false
  const left = a as Record<string, unknown>
  const right = b as Record<string, unknown>
  let keys = 0
  for (const key of Object.keys(left)) {
    const value = jsonForm(left[key])
    if (value === undefined) continue
    keys++
    if (!Object.hasOwn(right, key) || !jsonEqual(value, right[key])) return false
  }
  for (const key of Object.keys(right)) if (jsonForm(right[key]) !== undefined) keys--
  return keys === 0
}

// --- Internal helpers ---

function jsonForm(value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null
  if (typeof value === 'function' || typeof value === 'symbol') return undefined
  const toJson = (value as { toJSON?: unknown } | null | undefined)?.toJSON
  return typeof toJson === 'function' ? toJson.call(value) : value
}
