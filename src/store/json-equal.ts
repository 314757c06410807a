/** Deep JSON equality, the "equal" of the storage port's atomic steps: whether `a` and `b` have the same JSON form. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!jsonEqual(arrayItem(a[i]), arrayItem(b[i]))) return false
    return true
  }
  if (Array.isArray(b)) return false
  const keysA = jsonKeys(a as Record<string, unknown>)
  const keysB = jsonKeys(b as Record<string, unknown>)
  if (keysA.length !== keysB.length) return false
  for (const key of keysA) {
    if (!Object.hasOwn(b, key) || !jsonEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false
  }
  return true
}

function inJson(value: unknown): boolean {
  return value !== undefined && typeof value !== 'function' && typeof value !== 'symbol'
}

function arrayItem(value: unknown): unknown {
  return inJson(value) ? value : null
}

function jsonKeys(object: Record<string, unknown>): string[] {
  return Object.keys(object).filter(key => inJson(object[key]))
}
