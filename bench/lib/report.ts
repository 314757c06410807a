/** One benchmark figure and its verdict, printed as the `bench <name>: ...` line `bench/run.mjs` collects. */
export interface Figure {
  name: string
  value: number
  unit: string
  baseline: number
  baselineUnit?: string
  /** What the target applies to: the ratio ours/baseline, or the value itself. Absent: report only. */
  target?: { of: 'ratio' | 'value'; op: '>=' | '<='; limit: number }
  /** Why the figure does not measure what its target is about (printed as a note): the verdict is FAIL. */
  invalid?: string
}

/** Print a figure's line and say whether it met its target (true when it has none). */
export function report(figure: Figure): boolean {
  const ratio = figure.baseline === 0 ? Number.NaN : figure.value / figure.baseline
  const { target } = figure
  let verdict = 'REPORT'
  let met = true
  let targetText = 'none'
  if (target) {
    const measured = target.of === 'ratio' ? ratio : figure.value
    met = (target.op === '>=' ? measured >= target.limit : measured <= target.limit) && figure.invalid === undefined
    verdict = met ? 'PASS' : 'FAIL'
    if (figure.invalid !== undefined) note(`${figure.name} does not count: ${figure.invalid}`)
    targetText = `${target.op} ${target.limit}${target.of === 'value' ? ` ${figure.unit}` : ''}`
  }
  console.log(
    `bench ${figure.name}: ${format(figure.value)} ${figure.unit} | baseline ${format(figure.baseline)} ${figure.baselineUnit ?? figure.unit} | ratio ${Number.isFinite(ratio) ? ratio.toFixed(2) : '-'} | target ${targetText} | ${verdict}`,
  )
  return met
}

/** A progress note (not a figure): printed with a leading `#` so the summary skips it. */
export function note(text: string): void {
  console.log(`# ${text}`)
}

/** The median of some runs (the mean of the middle two for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

function format(value: number): string {
  if (!Number.isFinite(value)) return String(value)
  if (Math.abs(value) >= 100) return value.toFixed(0)
  if (Math.abs(value) >= 10) return value.toFixed(1)
  return value.toFixed(2)
}

/** One round of a paired comparison: the baseline's run and ours, back to back. */
export interface Paired<B, O> {
  baseline: B
  ours: O
}

/**
 * `count` rounds of one baseline run and one of ours back to back, the order swapped every round
 * (the baseline first in odd rounds), so that both runs of a round see about the same machine and
 * neither side always runs on the machine the other just left. `onRound` reports each round.
 */
export async function pairedRounds<B, O>(
  count: number,
  baseline: () => Promise<B>,
  ours: () => Promise<O>,
  onRound: (round: number, pair: Paired<B, O>) => void,
): Promise<Paired<B, O>[]> {
  const rounds: Paired<B, O>[] = []
  for (let round = 1; round <= count; round++) {
    let pair: Paired<B, O>
    if (round % 2) {
      const first = await baseline()
      pair = { baseline: first, ours: await ours() }
    } else {
      const first = await ours()
      pair = { baseline: await baseline(), ours: first }
    }
    rounds.push(pair)
    onRound(round, pair)
  }
  return rounds
}

/** The item whose `score` is the median of the items' scores (the lower middle one for an even count). */
export function medianBy<T>(items: T[], score: (item: T) => number): T {
  const sorted = [...items].sort((a, b) => score(a) - score(b))
  return sorted[Math.floor((sorted.length - 1) / 2)]!
}
