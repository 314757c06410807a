/**
 * A seeded random number generator (mulberry32) for replayable property tests: numbers in [0, 1).
 * 32-bit integer arithmetic throughout, so every seed gives a full-period sequence (a float LCG
 * such as `state * 1103515245` passes 2^53, loses its low bits and can fall into a short cycle).
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}
